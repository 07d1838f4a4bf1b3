package progress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/trainfn/trainfn/reconciler/progress/servingcert"
)

// How often each replica reads the TLS Secret again (to renew it, or to
// follow another replica's renewal), and forgets the gauges of jobs gone.
const (
	SecretCheckPeriod = 10 * time.Minute
	SweepPeriod       = time.Minute
)

// Server is the progress server as the reconciler's manager runs it, on
// every replica: a report may reach any of them through the Service.
type Server struct {
	Address string
	Handler *Handler
	Keeper  *servingcert.Keeper
	Metrics *Metrics
	// Cache tells which jobs still have workloads.
	Cache           client.Reader
	ShutdownTimeout time.Duration
	Log             logr.Logger
}

// NeedLeaderElection is false: every replica serves.
func (s *Server) NeedLeaderElection() bool { return false }

// Start gets the TLS material, then serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	s.firstCertificate(ctx)
	if ctx.Err() != nil {
		return nil
	}
	go s.Keeper.Run(ctx, SecretCheckPeriod)
	go s.sweep(ctx)
	s.Handler.Start(ctx)
	ln, err := net.Listen("tcp", s.Address)
	if err != nil {
		return err
	}
	srv := NewHTTPServer(s.Address, s.Handler, s.Keeper.GetCertificate)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), s.ShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	s.Log.Info("serving progress reports", "address", ln.Addr().String())
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-done
	return nil
}

// firstCertificate reads or makes the TLS material, trying again while
// the API server cannot be reached, until ctx ends.
func (s *Server) firstCertificate(ctx context.Context) {
	for {
		err := s.Keeper.Ensure(ctx)
		if err == nil {
			return
		}
		s.Log.Error(err, "getting the progress server's TLS material; trying again")
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
}

// sweep forgets the gauges of jobs whose workloads are gone.
func (s *Server) sweep(ctx context.Context) {
	t := time.NewTicker(SweepPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sweepOnce(ctx, s.Metrics, s.Cache)
	}
}

// sweepOnce forgets the gauges of the jobs cache holds no workload of. A
// job the cache cannot be asked about keeps them, until the next sweep.
func sweepOnce(ctx context.Context, m *Metrics, cache client.Reader) {
	for _, key := range m.reporting() {
		if first, err := firstWorkload(ctx, cache, key); err == nil && first == nil {
			m.forget(key)
		}
	}
}

// Filling runs a CAFiller on the leader: every CA ConfigMap is filled
// when it starts leading, and again when the CA changes.
type Filling struct {
	Filler *CAFiller
	Log    logr.Logger
}

// NeedLeaderElection is true: the leader writes, as it reconciles.
func (f *Filling) NeedLeaderElection() bool { return true }

// Start waits for the CA, then fills until ctx ends.
func (f *Filling) Start(ctx context.Context) error {
	for {
		if ca, _ := f.Filler.CA(); ca != nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	f.Filler.Run(ctx, func(err error) { f.Log.Error(err, "filling the progress CA into the jobs' ConfigMaps") })
	return nil
}
