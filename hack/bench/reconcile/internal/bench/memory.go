package bench

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// unscheduled is the scheduler the unrelated pods ask for; none runs, so
// they stay Pending: no binding, no kwok status updates, nothing for the
// control plane to do about them once created, which makes 10,000 of them
// a matter of seconds.
const unscheduled = "trainfn-bench-nobody"

// memory measures a fresh reconciler's peak memory once it has synced and
// handled one job, first in a cluster holding only that job, then beside
// pods trainfn did not render.
func (b *run) memory(ctx context.Context) (Memory, error) {
	res := Memory{Workers: b.cfg.MemoryWorkers, UnrelatedPods: b.cfg.Unrelated, Namespaces: b.cfg.UnrelatedNamespaces,
		UnrelatedState: "Pending (their scheduler does not run)"}
	var err error
	if res.Baseline, err = b.memoryRun(ctx, "memory-baseline"); err != nil {
		return res, err
	}
	// The loaded run handles a job of its own; this one must not add to it.
	if err := b.kube.deleteNamespace(ctx, "memory-baseline"); err != nil {
		return res, err
	}
	b.progress("memory: creating %d unrelated pods in %d namespaces", b.cfg.Unrelated, b.cfg.UnrelatedNamespaces)
	began := time.Now()
	if err := b.unrelated(ctx, true); err != nil {
		return res, err
	}
	res.CreateSeconds = time.Since(began).Seconds()
	b.progress("memory: created in %.1fs", res.CreateSeconds)
	if res.Loaded, err = b.memoryRun(ctx, "memory-loaded"); err != nil {
		return res, err
	}
	res.Ratio = float64(res.Loaded.PeakKiB) / float64(res.Baseline.PeakKiB)
	// The discovery figures come next, on a cluster without this load.
	b.progress("memory: deleting the unrelated pods and the jobs' namespaces")
	began = time.Now()
	if err := b.unrelated(ctx, false); err != nil {
		return res, err
	}
	if err := b.kube.deleteNamespace(ctx, "memory-loaded"); err != nil {
		return res, err
	}
	b.progress("memory: deleted in %.1fs", time.Since(began).Seconds())
	return res, nil
}

// memoryRun starts a reconciler, has it handle one job, and reads its
// memory once it has settled.
func (b *run) memoryRun(ctx context.Context, ns string) (Footprint, error) {
	var f Footprint
	r, err := b.startReconciler(ctx, ns)
	if err != nil {
		return f, err
	}
	defer r.stop()
	if err := b.kube.namespace(ctx, ns); err != nil {
		return f, err
	}
	objs, err := b.kube.render(ctx, jobName, b.cfg.MemoryWorkers)
	if err != nil {
		return f, err
	}
	w, err := watchScript(ctx, b.kube.Client, ns, jobName+"-config")
	if err != nil {
		return f, err
	}
	defer w.stop()
	if err := b.kube.apply(ctx, ns, objs); err != nil {
		return f, err
	}
	if _, err := w.waitFor(ctx, 0, 2*time.Minute, "listed every worker", listsAll(b.cfg.MemoryWorkers)); err != nil {
		return f, fmt.Errorf("%s: %w", ns, err)
	}
	m, err := r.settle(ctx)
	if err != nil {
		return f, err
	}
	f.PeakKiB, f.RSSKiB, err = r.memory()
	f.HeapKiB = int64(m.Sum("go_memstats_heap_inuse_bytes") / 1024)
	b.progress("memory: %s: peak RSS %.1f MiB", ns, float64(f.PeakKiB)/1024)
	return f, err
}

// unrelated creates or deletes the pods trainfn did not render: plain pods,
// as a web application's Deployment would make, without trainfn's labels.
func (b *run) unrelated(ctx context.Context, create bool) error {
	spaces := b.cfg.UnrelatedNamespaces
	if create {
		for i := range spaces {
			if err := b.kube.namespace(ctx, fmt.Sprintf("unrelated-%d", i)); err != nil {
				return err
			}
		}
	}
	pods := b.kube.Client.CoreV1()
	err := parallel(ctx, b.cfg.Unrelated, 64, func(ctx context.Context, i int) error {
		ns := fmt.Sprintf("unrelated-%d", i%spaces)
		name := fmt.Sprintf("app-%05d", i)
		if create {
			_, err := pods.Pods(ns).Create(ctx, unrelatedPod(name, i), metav1.CreateOptions{})
			return err
		}
		// Pods bound to no node go at once, grace period or not.
		return pods.Pods(ns).Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err != nil || create {
		return err
	}
	return parallel(ctx, spaces, spaces, func(ctx context.Context, i int) error {
		return b.kube.deleteNamespace(ctx, fmt.Sprintf("unrelated-%d", i))
	})
}

// unrelatedPod is a typical application pod: labels, a probe, requests,
// a few environment variables.
func unrelatedPod(name string, i int) *corev1.Pod {
	app := fmt.Sprintf("web-%d", i%50)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{"app.kubernetes.io/name": app, "app.kubernetes.io/component": "frontend", "pod-template-hash": "5d8f7c9b4"},
			Annotations: map[string]string{"example.com/team": "storefront", "example.com/revision": "42"},
		},
		Spec: corev1.PodSpec{
			SchedulerName: unscheduled,
			Containers: []corev1.Container{{
				Name:    "app",
				Image:   "registry.example/storefront/" + app + ":1.4.2",
				Command: []string{"/app/server"},
				Args:    []string{"--listen=:8080", "--log-format=json"},
				Ports:   []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env: []corev1.EnvVar{
					{Name: "APP_NAME", Value: app},
					{Name: "APP_ENV", Value: "production"},
					{Name: "DATABASE_URL", Value: "postgres://db.storefront.svc:5432/app"},
					{Name: "CACHE_URL", Value: "redis://cache.storefront.svc:6379"},
				},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("100m"),
					corev1.ResourceMemory: resource.MustParse("128Mi"),
				}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")},
				}},
			}},
		},
	}
}
