package reconciler

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/trainfn/trainfn/reconciler/progress"
	"github.com/trainfn/trainfn/reconciler/progress/servingcert"
	"github.com/trainfn/trainfn/reconciler/write"
)

// ProgressOptions configure the progress server.
type ProgressOptions struct {
	// Address serves the progress API over TLS; "0" or "" turns it off.
	Address string
	// SecretNamespace and SecretName are the Secret its TLS material is
	// kept in, shared by the replicas: the reconciler's namespace.
	SecretNamespace, SecretName string
	// DNSNames are those of its Service, which the serving certificate is
	// for.
	DNSNames []string
}

// On tells whether the progress server runs.
func (o ProgressOptions) On() bool { return o.Address != "" && o.Address != "0" }

// addProgress serves progress reports on every replica and fills the CA
// ConfigMaps on the leader; the returned filler, nil when off, fills a
// job's as it is reconciled.
func addProgress(mgr ctrl.Manager, opts Options, writes *prometheus.CounterVec) (*progress.CAFiller, error) {
	p := opts.Progress
	if !p.On() {
		return nil, nil
	}
	if p.SecretNamespace == "" || p.SecretName == "" || len(p.DNSNames) == 0 {
		return nil, errors.New("the progress server needs the namespace and name of its TLS Secret and its Service's DNS names")
	}
	log := mgr.GetLogger().WithName("progress")
	m := progress.NewMetrics(crmetrics.Registry)
	h, err := progress.New(progress.Config{
		Cache: mgr.GetClient(), Writer: mgr.GetClient(), Namespaces: opts.Namespaces,
		Log: log, Metrics: m, Writes: writes,
	})
	if err != nil {
		return nil, err
	}
	keeper := &servingcert.Keeper{
		// The reconciler caches no Secret: its own is read live, by name.
		Live: mgr.GetAPIReader(), Writer: mgr.GetClient(),
		Secret:   types.NamespacedName{Namespace: p.SecretNamespace, Name: p.SecretName},
		DNSNames: p.DNSNames, Now: time.Now, Log: log,
	}
	filler := &progress.CAFiller{Cache: mgr.GetClient(), Writer: write.Writer{Client: mgr.GetClient(), Writes: writes}, CA: keeper.CA}
	server := &progress.Server{
		Address: p.Address, Handler: h, Keeper: keeper, Metrics: m, Cache: mgr.GetClient(),
		ShutdownTimeout: opts.ShutdownTimeout, Log: log,
	}
	if err := mgr.Add(server); err != nil {
		return nil, err
	}
	return filler, mgr.Add(&progress.Filling{Filler: filler, Log: log})
}
