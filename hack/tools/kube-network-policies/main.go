// Command kube-network-policies is the NetworkPolicy agent of
// sigs.k8s.io/kube-network-policies for a node that is a process, not a
// pod, for the test node to run in its network namespace beside the
// kubelet and kube-proxy. The release's own command reads only the
// in-cluster configuration, a service account's files at a fixed path, so
// this main builds the same controller from a kubeconfig instead.
//
//	kube-network-policies --kubeconfig FILE --hostname-override NODE [--nfqueue-id 100] [--v 2]
//
// It watches pods, namespaces and NetworkPolicies, puts the addresses of
// this node's pods that a policy selects into the nftables table
// "inet kube-network-policies", and queues the first packet of each of
// their connections (postrouting, before SNAT) to userspace, which accepts
// or drops it. SIGINT and SIGTERM remove the table before it exits.
//
// The table needs nftables' queue expression (the kernel's nft_queue). A
// kernel without it refuses the whole table: the agent says so on every
// sync and judges only what something else queues to it, such as
// xtables' NFQUEUE target, which iptables-nft reaches through nft_compat:
//
//	iptables -t mangle -A FORWARD -m conntrack --ctstate NEW -j NFQUEUE --queue-num 100
//
// Pods on one bridge reach the IPv4 hooks only where bridged traffic goes
// through netfilter (br_netfilter, bridge-nf-call-iptables=1).
//
// AdminNetworkPolicy is left out: the test node runs only the stable API,
// so the agent needs no more than list and watch of those three kinds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

type options struct {
	kubeconfig      string
	nodeName        string
	queueID         int
	failOpen        bool
	metricsAddress  string
	dnsOnPrerouting bool
}

func main() {
	os.Exit(run())
}

func run() int {
	var o options
	logging := logsapi.NewLoggingConfiguration()
	logsapi.AddGoFlags(logging, flag.CommandLine)
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the agent's user (required)")
	flag.StringVar(&o.nodeName, "hostname-override", "", "name of the Node whose pods this agent guards (required: in a network namespace the host name is the machine's)")
	flag.IntVar(&o.queueID, "nfqueue-id", 100, "number of the nfqueue the first packets of connections go to")
	flag.BoolVar(&o.failOpen, "fail-open", false, "accept packets while no agent reads the queue, instead of dropping them")
	flag.StringVar(&o.metricsAddress, "metrics-bind-address", "", "address of the Prometheus metrics server; none when empty")
	flag.BoolVar(&o.dnsOnPrerouting, "netfilter-bug-1766-fix", true, "judge DNS packets on prerouting, after DNAT, for kernels before 6.12 whose conntrack races on UDP DNS")
	flag.Parse()
	logs.InitLogs()
	defer logs.FlushLogs()
	if err := logsapi.ValidateAndApply(logging, nil); err != nil {
		fmt.Fprintln(os.Stderr, "kube-network-policies:", err)
		return 2
	}
	if o.kubeconfig == "" || o.nodeName == "" {
		fmt.Fprintln(os.Stderr, "kube-network-policies: --kubeconfig and --hostname-override are required")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, o); err != nil {
		klog.ErrorS(err, "kube-network-policies stopped")
		return 1
	}
	return 0
}

// serve runs the controller until ctx ends, then waits for it to remove its
// nftables table: a node whose agent is gone would otherwise keep queueing
// packets that no one judges, and drop them.
func serve(ctx context.Context, o options) error {
	config, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", o.kubeconfig, err)
	}
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	config.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	// NRI stays on, as the release has it: with it off (Config.NRIdisabled)
	// v0.8.0 looks up an address no pod has in a nil plugin, and panics.
	// Where the runtime serves no NRI socket (containerd before 1.7) the
	// plugin fails to connect once, says so, and the informers alone answer.
	controller, err := networkpolicy.NewController(client,
		factory.Networking().V1().NetworkPolicies(),
		factory.Core().V1().Namespaces(),
		factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{
			FailOpen:            o.failOpen,
			QueueID:             o.queueID,
			NodeName:            o.nodeName,
			NetfilterBug1766Fix: o.dnsOnPrerouting,
		})
	if err != nil {
		return err
	}
	if o.metricsAddress != "" {
		server := &http.Server{Addr: o.metricsAddress, Handler: promhttp.Handler()}
		go func() {
			if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				klog.ErrorS(err, "metrics server")
			}
		}()
		defer server.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- controller.Run(ctx) }()
	factory.Start(ctx.Done())
	// The informers stop with ctx only: cancel it first, or Shutdown waits
	// forever once Run failed.
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	select {
	case err := <-done:
		// Run returns before ctx ends only when it failed: the queue could
		// not be opened, or the informers never synced.
		if err == nil {
			err = errors.New("controller returned")
		}
		return err
	case <-ctx.Done():
		// A signal during start-up ends Run before it made its table:
		// nothing to report then.
		if err := <-done; err != nil {
			klog.InfoS("controller stopped before it started", "reason", err)
		}
		return nil
	}
}
