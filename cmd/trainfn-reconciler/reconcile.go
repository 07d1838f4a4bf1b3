package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/trainfn/trainfn/cmd/internal/cli"
	"github.com/trainfn/trainfn/reconciler"
	"github.com/trainfn/trainfn/reconciler/diserver"
)

// rootCommand is the reconciler itself, with its flags; the Helm chart
// gives every one of them.
func rootCommand(stdout, stderr io.Writer) *cobra.Command {
	opts := reconciler.Options{
		LeaderElection:   true,
		LeaderElectionID: "trainfn-reconciler",
		MetricsAddress:   ":8080",
		ProbeAddress:     ":8081",
		Coalesce:         100 * time.Millisecond,
		Workers:          4,
		ShutdownTimeout:  20 * time.Second,
		SchedulingPeriod: 30 * time.Second,
		DIServerAddress:  ":8082",
		DIServer:         diserver.Policy{WriteRate: diserver.DefaultWriteRate, WriteBurst: diserver.DefaultWriteBurst},
	}
	var kubeconfig, level string
	cmd := &cobra.Command{
		Use:   "trainfn-reconciler",
		Short: "Run trainfn's in-cluster reconciler: elastic discovery and scaling, clean-up, SSH Secrets, the DI server",
		Long: `trainfn-reconciler keeps the run-time facts of the jobs trainfn
rendered: the discovery script of elastic MPIJobs, the worker count of
elastic jobs within their bounds, the clean-up of workers when a job ends
(cleanPodPolicy), the SSH Secret of jobs given none, and for DIJobs their
phase, the allocator's placement of preemptible jobs' workers and the DI
server API. It watches only objects trainfn rendered and never writes a
field the rendered output sets.`,
		Args:          cobra.NoArgs,
		Version:       cli.Version(version),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lvl zapcore.Level
			if err := lvl.Set(level); err != nil || (lvl != zapcore.InfoLevel && lvl != zapcore.DebugLevel) {
				fmt.Fprintf(stderr, "trainfn-reconciler: --log-level must be info or debug, not %q\n", level)
				return cli.ExitError(2)
			}
			if !(opts.DIServer.WriteRate > 0) || math.IsInf(opts.DIServer.WriteRate, 0) || opts.DIServer.WriteBurst < 1 {
				fmt.Fprintf(stderr, "trainfn-reconciler: --di-server-write-rate must be above 0 and --di-server-write-burst at least 1, not %v and %d\n",
					opts.DIServer.WriteRate, opts.DIServer.WriteBurst)
				return cli.ExitError(2)
			}
			ctrl.SetLogger(zap.New(zap.WriteTo(stderr), zap.Level(lvl), zap.JSONEncoder()))
			if opts.LeaderElectionNamespace == "" {
				opts.LeaderElectionNamespace = os.Getenv("POD_NAMESPACE")
			}
			config, err := restConfig(kubeconfig)
			if err != nil {
				fmt.Fprintln(stderr, "trainfn-reconciler:", err)
				return cli.ExitError(1)
			}
			if err := completeProgress(&opts.Progress); err != nil {
				fmt.Fprintln(stderr, "trainfn-reconciler:", err)
				return cli.ExitError(2)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := reconciler.Run(ctx, config, opts); err != nil {
				fmt.Fprintln(stderr, "trainfn-reconciler:", err)
				return cli.ExitError(1)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig to reach the API server; by default $KUBECONFIG, else the pod's service account")
	f.StringSliceVar(&opts.Namespaces, "namespaces", nil, "namespaces to watch, comma-separated; all when empty")
	f.BoolVar(&opts.LeaderElection, "leader-elect", opts.LeaderElection, "elect a leader among replicas; only the leader reconciles and allocates, while every replica serves the DI server API")
	f.StringVar(&opts.LeaderElectionID, "leader-election-id", opts.LeaderElectionID, "name of the leader election Lease")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease; by default $POD_NAMESPACE")
	f.StringVar(&opts.MetricsAddress, "metrics-bind-address", opts.MetricsAddress, `address serving Prometheus /metrics; "0" turns it off`)
	f.StringVar(&opts.ProbeAddress, "health-probe-bind-address", opts.ProbeAddress, `address serving /healthz and /readyz; "0" turns it off`)
	f.DurationVar(&opts.Coalesce, "coalesce", opts.Coalesce, "how long bursts of pod events are gathered into one write")
	f.IntVar(&opts.Workers, "workers", opts.Workers, "jobs reconciled at once")
	f.DurationVar(&opts.SchedulingPeriod, "scheduling-period", opts.SchedulingPeriod, "how often the allocator rebalances preemptible DIJobs; 0 runs no allocator")
	f.StringVar(&opts.DIServerAddress, "di-server-bind-address", opts.DIServerAddress, `address serving the DI server API; "0" turns it off`)
	f.Float64Var(&opts.DIServer.WriteRate, "di-server-write-rate", opts.DIServer.WriteRate,
		"requests a second, across all jobs, that the DI server API lets write to the API server (POST and DELETE .../replicas, POST .../profilings); more are answered 429 with Retry-After")
	f.IntVar(&opts.DIServer.WriteBurst, "di-server-write-burst", opts.DIServer.WriteBurst, "writes the DI server API admits at once above --di-server-write-rate")
	f.BoolVar(&opts.DIServer.TokenReview, "di-server-token-review", false,
		"also serve DI server callers presenting a bearer token for audience "+diserver.Audience+", authenticated by a TokenReview and authorized by a SubjectAccessReview (needs the right to create both); without it, only a job's own pods may call about it")
	progressFlags(f, &opts.Progress)
	f.StringVar(&level, "log-level", "info", "info or debug; logs are JSON on stderr")
	cmd.SetVersionTemplate("trainfn-reconciler {{.Version}}\n")
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.AddCommand(cli.VersionCommand("trainfn-reconciler", version, stdout))
	return cmd
}

// restConfig is the API server's address and credentials: the kubeconfig
// given, else controller-runtime's search ($KUBECONFIG, in-cluster, ~/.kube).
//
// Either way, the client does not throttle itself: client-go's default of 5
// requests a second would delay discovery behind a burst, and the API
// server's priority and fairness already shares its capacity.
func restConfig(kubeconfig string) (*rest.Config, error) {
	var c *rest.Config
	var err error
	if kubeconfig != "" {
		if c, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
			return nil, fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
		}
	} else if c, err = ctrl.GetConfig(); err != nil {
		return nil, fmt.Errorf("finding the API server: %w", err)
	}
	c.QPS, c.Burst = -1, 0
	return c, nil
}
