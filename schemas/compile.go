package schemas

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// The schemas' CUE module, as cue.mod/module.cue declares it; a test holds
// the two together.
const (
	modulePath      = "github.com/trainfn/trainfn/schemas"
	languageVersion = "v0.17.0"
)

// compile builds a package of the embedded schemas and the packages of
// this module it imports.
//
// cue/load would find them too, but every process that renders pays for
// it first thing: it validates cue.mod/module.cue against CUE's own schema
// for module files, and walks the file system, which here is embedded and
// has nothing to discover. A build.Instance made from the embedded files
// builds the same values: the first build in a process takes about 4 ms
// instead of 7 here.
//
// Comments are kept only with documented: only the exports read them.
func compile(ctx *cue.Context, pkg string, documented bool) (cue.Value, error) {
	options := []parser.Option{parser.Version(languageVersion)}
	if documented {
		options = append(options, parser.ParseComments)
	}
	packages := build.NewContext()
	var load build.LoadFunc
	load = func(_ token.Pos, importPath string) *build.Instance {
		dir, ok := strings.CutPrefix(importPath, modulePath+"/")
		if !ok {
			return nil // the standard library, which CUE builds in
		}
		return instance(packages, dir, importPath, load, options)
	}
	inst := instance(packages, strings.TrimPrefix(pkg, "./"), modulePath+"/"+strings.TrimPrefix(pkg, "./"), load, options)
	if inst.Err != nil {
		return cue.Value{}, fmt.Errorf("loading schema %s: %w", pkg, inst.Err)
	}
	v := ctx.BuildInstance(inst)
	if v.Err() != nil {
		return cue.Value{}, fmt.Errorf("compiling schema %s: %w", pkg, v.Err())
	}
	return v, nil
}

// instance is the package in dir, its files parsed and imports resolved.
func instance(packages *build.Context, dir, importPath string, load build.LoadFunc, options []parser.Option) *build.Instance {
	inst := packages.NewInstance(dir, load)
	inst.ImportPath = importPath
	inst.Module = modulePath
	entries, err := fs.ReadDir(sources, dir)
	if err != nil {
		inst.ReportError(errors.Promote(err, "reading "+dir))
		return inst
	}
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".cue" {
			continue
		}
		name := path.Join(dir, e.Name())
		src, err := sources.ReadFile(name)
		if err != nil {
			inst.ReportError(errors.Promote(err, "reading "+name))
			return inst
		}
		file, err := parser.ParseFile(path.Join("schemas", name), src, options...)
		if err != nil {
			inst.ReportError(errors.Promote(err, "parsing "+name))
			return inst
		}
		if err := inst.AddSyntax(file); err != nil {
			return inst
		}
	}
	if err := inst.Complete(); err != nil {
		inst.ReportError(errors.Promote(err, "importing into "+dir))
	}
	return inst
}
