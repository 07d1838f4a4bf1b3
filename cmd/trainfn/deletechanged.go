package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/trainfn/trainfn/changedjobs"
	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/kubeclient"
)

func deleteChangedCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var kubeconfig string
	var opts changedjobs.Options
	var flags functions.Flags
	cmd := &cobra.Command{
		Use:   "delete-changed [FILE|DIR|-]...",
		Short: "Delete the live Jobs whose pods a new render changes, before helm upgrade",
		Long: `delete-changed reads what is about to be applied, rendered objects or job
specs (which it renders, as render does), and deletes each live Job whose pods
would run something else: its pod template's render digest differs from the
new one. It waits until the Job and its pods are gone, so that the apply that
follows creates the Job anew under the same name. A Job whose pods run what
they ran is not touched, and keeps running.

It is for tools that cannot replace a Job whose pod template changed, which
the API server refuses to patch: helm upgrade (Helm 3 and 4; --force does
not replace a Job either), kubectl apply. Argo CD and Flux need no such step:
the rendered Jobs ask them to replace what they cannot patch.

The API server is found as kubectl finds it; Jobs whose object names no
namespace are looked for in -n's, else the current context's.`,
		Example: `  helm template pi charts/trainfn-job -f values.yaml --post-renderer trainfn \
    | trainfn delete-changed -n training - \
    && helm upgrade pi charts/trainfn-job -f values.yaml --post-renderer trainfn -n training`,
		RunE: func(cmd *cobra.Command, args []string) error {
			objects, err := expand(args, flags, stdin, stderr)
			if err != nil {
				return err
			}
			config, contextNamespace, err := kubeclient.Config(kubeconfig)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			if opts.Namespace == "" {
				opts.Namespace = contextNamespace
			}
			clients, err := kubeclient.New(config, stderr)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			batch, err := clients.For(batchv1.SchemeGroupVersion)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			results, err := changedjobs.Delete(cmd.Context(), batch, objects, opts)
			for _, r := range results {
				fmt.Fprintln(stdout, r)
			}
			if err != nil {
				fmt.Fprintln(stderr, "trainfn:", err)
				return exitError(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	cmd.Flags().StringVarP(&opts.Namespace, "namespace", "n", "", "the namespace of Jobs that name none (default: the context's)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "say what would be deleted, and delete nothing")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "how long to wait for each deleted Job's pods to be gone")
	return cmd
}
