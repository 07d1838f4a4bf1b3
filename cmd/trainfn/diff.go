package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/functions/jobdiff"
)

// diffTrouble is diff's exit status on an error, as diff(1)'s: 1 is for
// --exit-code's restarts.
const diffTrouble = 2

func diffCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var exitCode bool
	cmd := &cobra.Command{
		Use:   "diff OLD NEW",
		Short: "Say what syncing NEW after OLD does to each job: restarts it, or not",
		Long: `diff reads two revisions of job specs (each a file, a directory, or - for
standard input, as render reads them) and prints one line per job, paired by
kind, namespace and name:

  <Kind> <name>: restarts (<fields that force it>)
  <Kind> <name>: updated in place (<fields>)
  <Kind> <name>: unchanged
  <Kind> <name>: added
  <Kind> <name>: removed

A job restarts when what its pods run changes (its templates, the hostfile
and scripts they read as they start), which its render digest tells; an edit
to its labels, annotations or a field a running Job takes
(ttlSecondsAfterFinished, activeDeadlineSeconds, suspend) is patched in place.
Each revision renders with its own TrainFn configuration and Trainer runtimes.
A revision may also be what trainfn rendered (kustomize build's output, say):
its objects are grouped by their job's labels, and the fields named are theirs.

With --exit-code, diff exits 1 when a job restarts. On an error in either
revision it prints no line and exits 2.`,
		Example: `  trainfn diff <(git show origin/main:jobs/pi.yaml) jobs/pi.yaml
  trainfn diff --exit-code base/jobs jobs    # in a pull request's check
  trainfn diff <(kustomize build base) <(kustomize build overlay)`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			if args[0] == functions.Stdin && args[1] == functions.Stdin {
				fmt.Fprintln(stderr, "error: only one of OLD and NEW can be - (standard input)")
				return exitError(diffTrouble)
			}
			var revisions [2][]functions.Document
			for i, path := range args {
				docs, err := functions.ReadDocuments([]string{path}, stdin)
				if err != nil {
					return diffReport(stderr, err)
				}
				revisions[i] = docs
			}
			changes, err := jobdiff.Compare(revisions[0], revisions[1])
			if err != nil {
				return diffReport(stderr, err)
			}
			restarts := false
			for _, c := range changes {
				fmt.Fprintln(stdout, c)
				restarts = restarts || c.Effect == jobdiff.Restarts
			}
			if exitCode && restarts {
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&exitCode, "exit-code", false, "exit 1 when a job restarts")
	return cmd
}

// diffReport writes an error of diff, and exits with diffTrouble.
func diffReport(stderr io.Writer, err error) error {
	var code exitError
	if errors.As(report(stderr, err), &code) {
		return exitError(diffTrouble)
	}
	return nil
}
