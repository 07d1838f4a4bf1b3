package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/cmd/internal/cli"
	"github.com/trainfn/trainfn/functions"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = ""

type exitError = cli.ExitError

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Execute(rootCommand(stdin, stdout, stderr), args, stderr)
}

func rootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "trainfn",
		Short: "Expand training job specs into plain Kubernetes objects",
		Long: `trainfn validates training job specs (MPIJob, PyTorchJob and DIJob, as
their operators' users write them) against their schemas and expands them
into plain Kubernetes objects.

Given a ResourceList on standard input, trainfn is a KRM function: kustomize
(transformers: or generators:), kpt and other orchestrators run it. The
subcommands do the same on plain YAML files.`,
		Args:          cli.NoCommandArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f, ok := stdin.(*os.File); ok && isTerminal(f) {
				return cmd.Help()
			}
			err := functions.RunFunction(&kio.ByteReadWriter{Reader: stdin, Writer: stdout, KeepReaderAnnotations: true})
			return report(stderr, err)
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(renderCommand(stdin, stdout, stderr), validateCommand(stdin, stderr), diffCommand(stdin, stdout, stderr), deleteChangedCommand(stdin, stdout, stderr), reconcileMovedCommand(stderr), statusCommand(stdout, stderr), waitCommand(stdout, stderr), schemaCommand(stdout, stderr), cli.VersionCommand("trainfn", version, stdout))
	return root
}

func renderCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var outputDir string
	var flags functions.Flags
	cmd := &cobra.Command{
		Use:   "render [FILE|DIR|-]...",
		Short: "Expand the job specs in YAML files; print every object as one YAML stream",
		Long: `render reads YAML documents from files, directories (their .yaml, .yml and
.json files, recursively) or - (standard input, the default), replaces each job
spec with the objects it renders, passes every other document through, and
prints the result, sorted, to standard output. On any error nothing is
printed to standard output and the exit status is 1.

In a directory only regular files are read, and symbolic links to regular
files inside it: a link that leads out of it, a named pipe, a socket or a
device is an error. A file named as an argument may be a pipe, as
<(kustomize build) names one. No input is read past 128 MiB.

With --output-dir DIR the objects are written into DIR instead, a file each,
with a kustomization.yaml that lists them: a plain kustomization that any
kustomize builds without plugins (Flux's kustomize-controller, Argo CD's
default kustomize). DIR is replaced as a whole, so objects no longer rendered
leave it; render refuses a DIR holding files it did not write. -o is not
kubectl's: a DIR named as one of kubectl's output formats (-o yaml, -o json)
is refused unless it is a directory already; write ./yaml for a new one.

With --strict, every warning is an error: nothing is printed or written.`,
		Example: `  trainfn render examples/jobs/pi.yaml
  trainfn render jobs/ --output-dir deploy/training   # commit deploy/training for Flux
  trainfn render jobs/ --strict                       # in CI: a warning fails the build`,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := notAnOutputFormat(outputDir); err != nil {
				return err
			}
			objects, err := expand(args, flags, stdin, stderr)
			if err != nil {
				return err
			}
			if outputDir != "" {
				err = functions.WriteKustomization(outputDir, objects)
			} else {
				// Written whole or not at all: an object that fails to
				// encode must not leave the ones before it on stdout.
				var out heldOutput
				if err = functions.WriteDocuments(&out, objects); err == nil {
					err = out.writeTo(stdout)
				}
			}
			if err != nil {
				fmt.Fprintln(stderr, "error:", err)
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outputDir, "output-dir", "o", "", "write a kustomization into this directory instead of printing")
	strictFlag(cmd, &flags)
	return cmd
}

func validateCommand(stdin io.Reader, stderr io.Writer) *cobra.Command {
	var flags functions.Flags
	cmd := &cobra.Command{
		Use:   "validate [FILE|DIR|-]...",
		Short: "Check the job specs in YAML files; print only problems",
		Long: `validate does everything render does but print the objects: it reports every
problem with its file, line, field path and rule, and exits 1 if there is one.
With --strict, a warning is a problem too.`,
		RunE: func(_ *cobra.Command, args []string) error {
			_, err := expand(args, flags, stdin, stderr)
			return err
		},
	}
	strictFlag(cmd, &flags)
	return cmd
}

func strictFlag(cmd *cobra.Command, flags *functions.Flags) {
	cmd.Flags().BoolVar(&flags.Strict, "strict", false,
		"fail on warnings too, reported as errors (as a TrainFn's spec.strict: true)")
}

// expand reads and expands the documents of paths, writing diagnostics to
// stderr.
func expand(paths []string, flags functions.Flags, stdin io.Reader, stderr io.Writer) ([]*yaml.RNode, error) {
	if len(paths) == 0 {
		paths = []string{functions.Stdin}
	}
	objects, diags, err := functions.ExpandFiles(paths, stdin, flags)
	if err != nil {
		return nil, report(stderr, err)
	}
	if len(diags) > 0 {
		fmt.Fprintln(stderr, diags.Error())
	}
	if diags.HasErrors() {
		return nil, exitError(1)
	}
	return objects, nil
}

// report writes why a KRM function run failed: its diagnostics, one per
// line, or the failure to read or write the ResourceList.
func report(stderr io.Writer, err error) error {
	if err == nil {
		return nil
	}
	var diags functions.Diagnostics
	if errors.As(err, &diags) {
		fmt.Fprintln(stderr, diags.Error())
	} else {
		fmt.Fprintln(stderr, "error:", err)
	}
	return exitError(1)
}

// isTerminal reports whether f is a terminal a user ran trainfn from
// without piping anything in. Other character devices are read as they
// are: /dev/null is an empty input, and /dev/zero no YAML text.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
