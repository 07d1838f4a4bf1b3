package functions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// Stdin names standard input among the paths ReadDocuments reads.
const Stdin = "-"

// ReadDocuments reads every YAML document of the given paths: files,
// directories (their regular .yaml, .yml and .json files, recursively, in
// lexical order, skipping hidden ones; see listDirectory) and "-" for
// stdin. Documents of a `kind: List` are read as its items.
//
// Documents unfit to be read further (see Read) fail the read; their
// problems, in every file, are the error, as Diagnostics.
func ReadDocuments(paths []string, stdin io.Reader) ([]Document, error) {
	docs, malformed, err := Read(paths, stdin)
	if err != nil {
		return nil, err
	}
	if len(malformed) > 0 {
		return nil, malformed
	}
	return docs, nil
}

// Read reads the documents of paths as ReadDocuments does, and reports
// those unfit to be read further apart, as Diagnostics: a file that is no
// YAML text, a document that is no YAML, or one that wellFormed refuses;
// and inputs refused before they are read: one larger than MaxInputBytes,
// and in a directory, a file that is not regular or a symbolic link that
// leads out of it (see listDirectory). Every other document is read, so
// that one broken file hides no other file's problems. The error is for
// paths that cannot be read at all.
func Read(paths []string, stdin io.Reader) ([]Document, Diagnostics, error) {
	var r streamReader
	for _, p := range paths {
		if err := r.readPath(p, stdin); err != nil {
			return nil, nil, err
		}
	}
	return r.docs, r.malformed, nil
}

// streamReader collects the documents of the inputs it reads, and the
// problems of those unfit to be read further.
type streamReader struct {
	docs      []Document
	malformed Diagnostics
}

func (r *streamReader) readPath(p string, stdin io.Reader) error {
	if p == Stdin {
		data, refused, err := readLimited(stdinName, stdin)
		return r.add(stdinName, data, refused, err)
	}
	info, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		data, refused, err := readFile(p)
		return r.add(p, data, refused, err)
	}
	dir, err := listDirectory(p)
	if err != nil {
		return err
	}
	r.malformed = append(r.malformed, dir.refused...)
	root, err := os.OpenRoot(dir.resolved)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range dir.files {
		data, refused, err := dir.read(root, f)
		if err := r.add(filepath.Join(p, f.at), data, refused, err); err != nil {
			return err
		}
	}
	return nil
}

// add parses what was read of the input name, or records why it was not.
func (r *streamReader) add(name string, data []byte, refused *Diagnostic, err error) error {
	switch {
	case err != nil:
		return err
	case refused != nil:
		r.malformed = append(r.malformed, *refused)
		return nil
	}
	if d := checkText(name, data); d != nil {
		r.malformed = append(r.malformed, *d)
		return nil
	}
	read, diags := parseDocuments(name, data)
	r.malformed = append(r.malformed, diags...)
	r.docs = append(r.docs, read...)
	return nil
}

// ExpandFiles reads the documents of paths and expands them, as a command
// line's flags say: the objects, and every problem of every file, those
// that stopped a document from being read among them. The objects are nil
// when any problem is an error. The error is for paths that cannot be read
// at all.
func ExpandFiles(paths []string, stdin io.Reader, flags Flags) ([]*yaml.RNode, Diagnostics, error) {
	docs, malformed, err := Read(paths, stdin)
	if err != nil {
		return nil, nil, err
	}
	objects, _, diags := expand(docs, flags)
	if len(malformed) == 0 {
		return objects, diags, nil
	}
	diags = append(malformed, diags...)
	sortDiagnostics(diags)
	if !slices.ContainsFunc(docs, func(d Document) bool { return isConfig(d.Node) }) {
		// A document that could not be read may have been the run's
		// configuration, which the others' problems would then depend on.
		diags = append(diags, Diagnostic{Severity: Warning,
			Message: "the documents that could be read were checked with trainfn's default options: a TrainFn configuration among those that could not would change how they render"})
	}
	return nil, diags, nil
}

// separator is a line starting with "---", as kyaml's reader splits streams,
// so that a comment above a document stays with it.
var separator = regexp.MustCompile(`\n---.*\n`)

// parseDocuments splits a stream into documents, remembering the line each
// starts on so that messages point into the file, not into the document.
// Documents unfit to be read further are left out, and their problems
// returned.
func parseDocuments(name string, data []byte) ([]Document, Diagnostics) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	var docs []Document
	var malformed Diagnostics
	// index counts every document of the file, those left out too, so
	// that each keeps its place (a KRM result's file.index).
	start, line, index := 0, 1, 0
	bounds := append(separator.FindAllStringIndex(text, -1), []int{len(text), len(text)})
	for _, b := range bounds {
		part := text[start:b[0]]
		if b[0] < len(text) {
			part += "\n"
		}
		nodes, err := decode(part)
		if err != nil {
			malformed = append(malformed, syntaxError(Source{Path: name, Index: index, Line: line}, err))
			index++
		}
		for _, n := range nodes {
			doc := Document{Node: n, Source: Source{Path: name, Index: index, Line: line}}
			index++
			if problems := wellFormed(doc); len(problems) > 0 {
				malformed = append(malformed, problems...)
				continue
			}
			docs = append(docs, doc)
		}
		line += strings.Count(text[start:b[1]], "\n")
		start = b[1]
	}
	return docs, malformed
}

// lineError is how yaml.v3 (with "yaml: ") and decode begin the message of
// an error at a line of the document.
var lineError = regexp.MustCompile(`^(yaml: )?line (\d+): `)

// syntaxError is a document that cannot be read, at the line of its file
// that the message names, else at the document's first.
func syntaxError(doc Source, err error) Diagnostic {
	d := Diagnostic{Severity: Error, Source: doc, Line: doc.Line, Message: err.Error()}
	m := lineError.FindStringSubmatch(d.Message)
	if m == nil {
		return d
	}
	n, _ := strconv.Atoi(m[2])
	d.Line, _ = absolute(doc, n, 0)
	d.Message = strings.TrimPrefix(d.Message, m[0])
	if m[1] != "" {
		d.Message = "not YAML: " + d.Message
	}
	return d
}

// decode reads one document; empty documents give nothing, Lists their items.
func decode(text string) ([]*yaml.RNode, error) {
	var node yaml.Node
	if err := yaml.NewDecoder(bytes.NewBufferString(text)).Decode(&node); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	if yaml.IsYNodeEmptyDoc(&node) {
		return nil, nil
	}
	n := yaml.NewRNode(&node)
	// kyaml reads the kind of any node as if it were a mapping, and fails
	// on some that are not.
	if n.YNode().Kind == yaml.MappingNode && n.GetKind() == "List" && n.GetApiVersion() == "v1" {
		items := ynode.Get(n.YNode(), "items")
		if !given(items) {
			return nil, nil
		}
		if items.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("line %d: the items of a v1 List must be a sequence of objects, not %s", items.Line, kindName(items))
		}
		elements := make([]*yaml.RNode, len(items.Content))
		for i, e := range items.Content {
			if e.Kind == yaml.AliasNode {
				// Another item already is this object: two would collide.
				return nil, fmt.Errorf("line %d: items[%d] is a YAML alias (*%s) of another item: each object is written out once", e.Line, i, e.Value)
			}
			elements[i] = yaml.NewRNode(e)
		}
		return elements, nil
	}
	return []*yaml.RNode{n}, nil
}

// WriteDocuments writes objects as one YAML stream. Each document gets an
// encoder of its own: yaml.v3's encoder keeps every event of a stream until
// it ends, so one encoder for thousands of documents costs memory in
// proportion to the whole output.
func WriteDocuments(w io.Writer, objects []*yaml.RNode) error {
	for i, o := range objects {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		// Keep annotations as they are: trainfn's reader adds none, so any
		// there are the document's own.
		if err := (kio.ByteWriter{Writer: w, KeepReaderAnnotations: true}).Write([]*yaml.RNode{o}); err != nil {
			return err
		}
	}
	return nil
}
