package main

import (
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/output"
)

func statusCommand(stdout, stderr io.Writer) *cobra.Command {
	var jf jobFlags
	var out string
	var noHeaders, watch bool
	cmd := &cobra.Command{
		Use:   "status [JOB | KIND/JOB]...",
		Short: "Show the jobs trainfn rendered, from their live objects, as kubectl get shows objects",
		Long: `status lists the trainfn jobs of a namespace, or those named, with their
phase, their pods ready over those they should have, restarts and age; -o wide
adds their progress and the last failure's reason. -o json and -o yaml write
each job as a document shaped like its operator's object: conditions (Created,
Running, Restarting, Suspended, Succeeded, Failed), startTime, completionTime
and replicaStatuses under status. docs/commands.md describes every column and
phase.

No job object exists in the cluster: a job is the Jobs, StatefulSets and pods
labelled with its name, and its status is derived from them by the
reconciler's own rules. Jobs of two kinds may share a name (a PyTorchJob and
the TrainJob it moves to): name one as KIND/JOB (trainjob/train), or as -o
name writes it (trainjob.trainer.kubeflow.org/train).

The API server and namespace are found as kubectl finds them, with kubectl's
flags (--kubeconfig, --context, -n, ...). -w prints a job again each time its
status changes, until interrupted.`,
		Example: `  trainfn status -n team-a
  trainfn status -A -l team=nlp -o wide
  trainfn status pi -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}'
  trainfn status -w pi`,
		ValidArgsFunction: jobNames(&jf),
		RunE: func(cmd *cobra.Command, args []string) error {
			printer, err := output.New(out, noHeaders, jf.allNamespaces)
			if err != nil {
				return fail(stderr, usageError{err.Error()})
			}
			src, err := jf.source(stderr, args)
			if err != nil {
				return fail(stderr, err)
			}
			one := len(args) == 1
			if watch {
				ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
				defer stop()
				f, err := src.connect(ctx)
				if err != nil {
					return fail(stderr, err)
				}
				// Each change is printed as an object of its own, as
				// kubectl get -w prints each event's.
				err = f.Watch(ctx, src.find(args), func(jobs []status.Job) error {
					for _, j := range jobs {
						if err := printer.Print(stdout, []status.Job{j}, true); err != nil {
							return err
						}
					}
					return nil
				})
				return fail(stderr, err)
			}
			jobs, err := src.find(args)(cmd.Context(), src.lister)
			if err != nil {
				return fail(stderr, err)
			}
			if len(jobs) == 0 && printer.IsTable() {
				fmt.Fprintln(stderr, status.NoneFound(src.namespace))
				return nil
			}
			return fail(stderr, printer.Print(stdout, jobs, one))
		},
	}
	jf.bind(cmd)
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "Output format: wide, name, json, yaml, jsonpath=..., jsonpath-as-json=..., jsonpath-file=..., go-template=..., go-template-file=...; a table by default")
	f.BoolVar(&noHeaders, "no-headers", false, "Print the table without its header")
	f.BoolVarP(&watch, "watch", "w", false, "After the jobs, print each one again when its status changes")
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return output.Formats, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	return cmd
}
