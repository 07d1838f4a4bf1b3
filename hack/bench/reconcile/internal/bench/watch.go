package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/trainfn/trainfn/render/handoff"
)

// scripts follows one job's discovery script as the API server serves it,
// each version stamped with when the benchmark saw it: the end of every
// latency measured here.
type scripts struct {
	mu   sync.Mutex
	seen []version
	wake chan struct{} // closed, and replaced, at each version
	stop context.CancelFunc
}

type version struct {
	at    time.Time
	hosts map[string]bool // pod host names, the part before the first dot
}

// watchScript starts following the discovery script of a ConfigMap; it
// returns once the watch is established, whether the ConfigMap exists yet
// or not.
func watchScript(ctx context.Context, client kubernetes.Interface, ns, name string) (*scripts, error) {
	ctx, cancel := context.WithCancel(ctx)
	s := &scripts{wake: make(chan struct{}), stop: cancel}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	informer := factory.Core().V1().ConfigMaps().Informer()
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.observe,
		UpdateFunc: func(_, obj any) { s.observe(obj) },
	})
	if err != nil {
		cancel()
		return nil, err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("watching ConfigMap %s/%s: %v never synced", ns, name, typ)
		}
	}
	return s, nil
}

func (s *scripts) observe(obj any) {
	at := time.Now()
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return
	}
	v := version{at: at, hosts: hostsOf(cm.Data[handoff.DiscoverHostsKey])}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, v)
	close(s.wake)
	s.wake = make(chan struct{})
}

// hostsOf are the pods a discovery script lists, by host name; the
// Service's name after the dot is the same on every line.
func hostsOf(script string) map[string]bool {
	hosts := map[string]bool{}
	for line := range strings.Lines(script) {
		host, ok := strings.CutPrefix(strings.TrimSpace(line), "echo ")
		if !ok {
			continue
		}
		host, _, _ = strings.Cut(host, ":")
		host, _, _ = strings.Cut(host, ".")
		hosts[host] = true
	}
	return hosts
}

// mark is where the versions seen after now begin.
func (s *scripts) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

// waitFor returns when the first version from mark on that satisfies ok
// was seen.
func (s *scripts) waitFor(ctx context.Context, mark int, timeout time.Duration, what string, ok func(hosts map[string]bool) bool) (time.Time, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		for ; mark < len(s.seen); mark++ {
			if ok(s.seen[mark].hosts) {
				at := s.seen[mark].at
				s.mu.Unlock()
				return at, nil
			}
		}
		wake := s.wake
		s.mu.Unlock()
		select {
		case <-wake:
		case <-timer.C:
			return time.Time{}, fmt.Errorf("the discovery script never %s within %s", what, timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// versions counts the versions seen from mark on.
func (s *scripts) versions(mark int) int {
	return s.mark() - mark
}
