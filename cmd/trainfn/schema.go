package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/trainfn/trainfn/cmd/internal/cli"
	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/schemas"
	"github.com/trainfn/trainfn/schemas/export"
)

// catalog holds the schemas trainfn schema exports: those of the kinds
// trainfn renders, of its config, and of the runtimes its TrainJobs refer
// to.
var catalog = export.NewCatalog(render.Kinds(), render.RuntimeKinds()...)

// Output formats of trainfn schema.
const (
	formatJSONSchema = "jsonschema"
	formatOpenAPI    = "openapi"
	formatKRM        = "krm-function-definition"
)

func schemaCommand(stdout, stderr io.Writer) *cobra.Command {
	var format, outDir, image string
	cmd := &cobra.Command{
		Use:   "schema [KIND...]",
		Short: "Print the JSON Schema or OpenAPI of the documents trainfn reads",
		Long: `schema converts trainfn's CUE schemas for editors and validators.

  -f jsonschema (the default): one kind's JSON Schema (draft 2020-12), for
     yaml-language-server and the editors that use it; with -o DIR, every kind
     named (all of them when none is) under DIR/<group>/<kind>_<version>.json,
     where kubeconform finds them with
       -schema-location 'DIR/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json'
  -f openapi: one OpenAPI 3.0 document with the kinds named (all of them when
     none is) in components.schemas
  -f krm-function-definition: trainfn as a KRM function (KRMFunctionDefinition,
     config.kubernetes.io/v1alpha1), with the schema of its TrainFn config

A KIND is a kind (MPIJob: every version of it), group/version/kind
(kubeflow.org/v2beta1/MPIJob) or kind.version.group (MPIJob.v2beta1.kubeflow.org).

The schemas leave out the rules that relate fields to each other (a job name's
length and its worker count, exactly one of a DIJob's template and tasks): an
exported schema never refuses what trainfn accepts, and trainfn validate checks
the rest.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkSchemaFlags(format, outDir, image, args); err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(2)
			}
			var kinds []schemas.Kind
			for _, a := range args {
				found, err := catalog.LookupKind(a)
				if err != nil {
					fmt.Fprintln(stderr, "trainfn:", err)
					return exitError(1)
				}
				kinds = append(kinds, found...)
			}
			// A kind named twice, in two spellings, is one kind.
			export.SortKinds(kinds)
			kinds = slices.Compact(kinds)
			out, err := exportSchemas(format, outDir, image, kinds)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			_, err = stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", formatJSONSchema, "jsonschema, openapi or krm-function-definition")
	cmd.Flags().StringVarP(&outDir, "output-dir", "o", "", "jsonschema: write each kind's schema under this folder, in kubeconform's layout")
	cmd.Flags().StringVar(&image, "image", "", "krm-function-definition: the function's image (default "+export.FunctionImageRepository+":<version>)")
	return cmd
}

// checkSchemaFlags refuses the combinations that mean nothing.
func checkSchemaFlags(format, outDir, image string, args []string) error {
	switch format {
	case formatJSONSchema, formatOpenAPI, formatKRM:
	default:
		return fmt.Errorf("unknown format %q: use %s, %s or %s", format, formatJSONSchema, formatOpenAPI, formatKRM)
	}
	if outDir != "" && format != formatJSONSchema {
		return fmt.Errorf("-o writes JSON Schema files: with -f %s, redirect standard output", format)
	}
	if image != "" && format != formatKRM {
		return fmt.Errorf("--image is for -f %s", formatKRM)
	}
	if format == formatKRM && len(args) > 0 {
		return fmt.Errorf("-f %s takes no kind: it describes trainfn, configured by %s", formatKRM, export.KindName(schemas.FunctionConfig))
	}
	return nil
}

// exportSchemas is what trainfn schema prints.
func exportSchemas(format, outDir, image string, kinds []schemas.Kind) ([]byte, error) {
	switch format {
	case formatKRM:
		if image == "" {
			image = export.FunctionImage(cli.Version(version))
		}
		return catalog.KRMFunctionDefinition(image)
	case formatOpenAPI:
		set, err := catalog.Build(kinds...)
		if err != nil {
			return nil, err
		}
		return set.OpenAPI(cli.Version(version))
	}
	if outDir == "" && len(kinds) != 1 {
		return nil, oneKindError(kinds)
	}
	set, err := catalog.Build(kinds...)
	if err != nil {
		return nil, err
	}
	if outDir == "" {
		return set.JSONSchema(kinds[0])
	}
	written, err := set.WriteKubeconform(outDir)
	if err != nil {
		return nil, err
	}
	return []byte(strings.Join(written, "\n") + "\n"), nil
}

func oneKindError(kinds []schemas.Kind) error {
	if len(kinds) == 0 {
		return fmt.Errorf("name the kind whose JSON Schema to print, or write every kind's with -o DIR")
	}
	var names []string
	for _, k := range kinds {
		names = append(names, export.KindName(k))
	}
	return fmt.Errorf("one JSON Schema is printed at a time, and that names %d kinds (%s): name one, or write them all with -o DIR",
		len(kinds), strings.Join(names, ", "))
}
