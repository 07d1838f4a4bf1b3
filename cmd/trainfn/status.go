package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/trainfn/trainfn/kubeclient"
	"github.com/trainfn/trainfn/status"
)

func statusCommand(stdout, stderr io.Writer) *cobra.Command {
	var kubeconfig, namespace, output string
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "status [JOB | KIND/JOB]",
		Short: "Show the phase of the jobs trainfn rendered, from their live objects",
		Long: `status lists the trainfn jobs of a namespace, or the one named, with their
phase (Pending, Starting, Running, Restarting, Succeeded or Failed), their pods
ready over those they should have, restarts and age. No job object exists in
the cluster: a job is the Jobs, StatefulSets and pods labelled with its name,
and its phase is derived from them by the reconciler's own rules. Jobs of
two kinds may share a name (a PyTorchJob and the TrainJob it moves to): name
one as KIND/JOB, trainjob/train say.

The API server and namespace are found as kubectl finds them: --kubeconfig,
else $KUBECONFIG, else ~/.kube/config, else the pod's service account; the
namespace is the current context's unless -n or -A says otherwise.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := status.ParseFormat(output)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(2)
			}
			if allNamespaces && len(args) == 1 {
				fmt.Fprintln(stderr, "trainfn: a job is found by name in one namespace: give -n, not -A")
				return exitError(2)
			}
			config, contextNamespace, err := kubeclient.Config(kubeconfig)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			if namespace == "" {
				namespace = contextNamespace
			}
			if allNamespaces {
				namespace = ""
			}
			c, err := status.NewClient(config, stderr)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			var jobs []status.Job
			var doc any
			if len(args) == 1 {
				var job status.Job
				job, err = status.Get(cmd.Context(), c, namespace, args[0])
				jobs, doc = []status.Job{job}, job
			} else {
				jobs, err = status.List(cmd.Context(), c, namespace)
				doc = status.JobList{Items: jobs}
			}
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			switch {
			case format != status.Table:
				err = status.WriteDocument(stdout, format, doc)
			case len(jobs) == 0:
				fmt.Fprintln(stderr, status.NoneFound(namespace))
			default:
				err = status.WriteTable(stdout, jobs, allNamespaces, time.Now())
			}
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig to reach the API server; by default $KUBECONFIG, else ~/.kube/config, else the pod's service account")
	f.StringVarP(&namespace, "namespace", "n", "", "namespace of the jobs; by default the kubeconfig context's")
	f.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the jobs of every namespace")
	f.StringVarP(&output, "output", "o", string(status.Table), "table, json or yaml")
	cmd.MarkFlagsMutuallyExclusive("namespace", "all-namespaces")
	return cmd
}
