package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/trainfn/trainfn/reconciler/observed"
	"github.com/trainfn/trainfn/reconciler/write"
	"github.com/trainfn/trainfn/render/handoff"
)

// Rules are the rights Update needs: the discover_hosts.sh key of the
// job's <job>-config ConfigMap, and an annotation of the launcher's pod.
var Rules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"patch"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}},
}

// Updater keeps an elastic MPIJob's discovery script equal to the hosts
// that can take work now.
type Updater struct {
	Writer write.Writer
	// Writes counts the scripts written; Latency, from a worker becoming
	// ready to the script that lists it.
	Writes  prometheus.Counter
	Latency prometheus.Histogram
	// Now is the clock Latency is measured with.
	Now func() time.Time
}

// Update writes the job's discovery script when the workers that can take
// work changed, then nudges the launcher's pod so the kubelet refreshes
// its copy at once.
func (u *Updater) Update(ctx context.Context, j *observed.Job, e *observed.ElasticWorkers) error {
	s := e.Object()
	perWorker, asked, err := observed.Slots(s, handoff.SlotsPerWorker)
	if !asked || j.Config == nil {
		// Not an MPIJob (PyTorch needs no discovery), or its ConfigMap is
		// not applied yet: its creation brings the job back.
		return nil
	}
	if err != nil {
		return err
	}
	launcherSlots, launcherWorks, err := observed.Slots(s, handoff.LauncherSlots)
	if err != nil {
		return err
	}
	launcher := j.Launcher()
	hosts := Hosts(Job{
		Workers: j.PodsOf(handoff.RoleWorker), Replicas: e.Indexes(), SlotsPerWorker: perWorker,
		Launcher: launcher, LauncherWorks: launcherWorks, LauncherSlots: launcherSlots,
	})
	script := Script(hosts, handoff.DiscoverFormat(s.GetAnnotations()[handoff.DiscoverFormatAnnotation]))
	if current, ok := j.Config.Data[handoff.DiscoverHostsKey]; !ok || current != script {
		patch := map[string]any{"data": map[string]string{handoff.DiscoverHostsKey: script}}
		if err := u.Writer.MergePatch(ctx, j.Config, patch); err != nil {
			return err
		}
		u.observe(hosts, current)
		log.FromContext(ctx).Info("wrote discovered hosts", "configMap", j.Config.Name, "hosts", len(hosts))
	}
	if launcher == nil {
		return nil
	}
	digest := sha256.Sum256([]byte(script))
	mark := hex.EncodeToString(digest[:8])
	if launcher.Annotations[handoff.DiscoveredHosts] == mark {
		return nil
	}
	// Any change to the pod makes the kubelet sync it, and a sync
	// refreshes its ConfigMap volumes; otherwise the file changes only at
	// the kubelet's next periodic sync, up to a minute or more later.
	err = u.Writer.MergePatch(ctx, launcher, map[string]any{"metadata": map[string]any{"annotations": map[string]string{handoff.DiscoveredHosts: mark}}})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// observe counts a script written, and how long each host it lists for
// the first time waited, from its pod becoming ready.
func (u *Updater) observe(hosts []Host, previous string) {
	u.Writes.Inc()
	now := u.Now()
	listed := Listed(previous)
	for _, h := range hosts {
		if !h.ReadySince.IsZero() && !listed[h.Name] {
			u.Latency.Observe(now.Sub(h.ReadySince).Seconds())
		}
	}
}
