//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/ssa"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/render/gitops"
	"github.com/trainfn/trainfn/test/gitopssync"
	"github.com/trainfn/trainfn/test/testtool"
)

// A job edited in Git, as a team edits it: more workers (which changes the
// workers' Job and the hostfile, not the launcher's template), its labels,
// annotations and TTL, suspended and resumed, then a new image.
const (
	piJob = `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
METADATA
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
RUNPOLICY
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: mpioperator/mpi-pi:IMAGE
            name: mpi-launcher
            command: [mpirun, -n, "2", /home/mpiuser/pi]
    Worker:
      replicas: WORKERS
      template:
        spec:
          containers:
          - image: mpioperator/mpi-pi:IMAGE
            name: mpi-worker
`
	// other is a job in the same repository that nobody edits.
	other = `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: other
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch:1
`
	// relabelled is what a platform team adds to every job at once: a
	// label for cost attribution, an annotation, a TTL.
	relabelled = "  labels:\n    cost-center: vision\n  annotations:\n    owner: team-vision\n"
	ttl        = "    ttlSecondsAfterFinished: 3600\n"
)

// piRevision is pi with image and workers, its metadata and runPolicy
// given the lines of metadata and runPolicy.
func piRevision(image string, workers int, metadata, runPolicy string) string {
	return strings.NewReplacer("IMAGE", image, "WORKERS", fmt.Sprint(workers), "METADATA\n", metadata, "RUNPOLICY\n", runPolicy).Replace(piJob) + "---\n" + other
}

// gitopsRevision is a commit the scenarios sync, and what must follow.
type gitopsRevision struct {
	what    string
	spec    string
	workers int32
	image   string
	changed bool // whether pi's Jobs must be new
	// podsKept: pi's pods must be those of the revision before, their
	// Jobs patched in place.
	podsKept bool
	// suspended: pi's Jobs must be suspended, with no pod left.
	suspended bool
	// labels and annotations that pi's Jobs must carry, and its TTL.
	labels, annotations map[string]string
	ttl                 *int32
}

// gitopsRevisions are the commits the scenarios sync, one after another.
var gitopsRevisions = []gitopsRevision{
	{what: "first sync", spec: piRevision("openmpi", 2, "", ""), workers: 2, image: "mpioperator/mpi-pi:openmpi", changed: true},
	{what: "a third worker", spec: piRevision("openmpi", 3, "", ""), workers: 3, image: "mpioperator/mpi-pi:openmpi", changed: true},
	{
		what: "a label, an annotation and a TTL", spec: piRevision("openmpi", 3, relabelled, ttl), workers: 3, image: "mpioperator/mpi-pi:openmpi",
		podsKept: true, labels: map[string]string{"cost-center": "vision"}, annotations: map[string]string{"owner": "team-vision"}, ttl: new(int32(3600)),
	},
	{
		what: "suspended", spec: piRevision("openmpi", 3, relabelled, ttl+"    suspend: true\n"), workers: 3, image: "mpioperator/mpi-pi:openmpi",
		suspended: true,
	},
	{what: "resumed", spec: piRevision("openmpi", 3, relabelled, ttl+"    suspend: false\n"), workers: 3, image: "mpioperator/mpi-pi:openmpi"},
	{what: "a new image", spec: piRevision("mpich", 3, relabelled, ttl), workers: 3, image: "mpioperator/mpi-pi:mpich", changed: true},
	{what: "the same commit again", spec: piRevision("mpich", 3, relabelled, ttl), workers: 3, image: "mpioperator/mpi-pi:mpich", podsKept: true},
}

// syncer applies one revision's rendered objects into a namespace the way
// a GitOps tool does, logging what the tool reported.
type syncer func(t *testing.T, ns string, objs []*unstructured.Unstructured) error

// syncWith makes a syncer of a tool's sync.
func syncWith(name string, sync gitopssync.Sync) syncer {
	return func(t *testing.T, ns string, objs []*unstructured.Unstructured) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		report, err := sync(ctx, ns, objs)
		t.Logf("%s:\n%s", name, report)
		return err
	}
}

// fluxSync syncs as kustomize-controller does, with opts.
func fluxSync(t *testing.T, opts ssa.ApplyOptions) syncer {
	sync, err := gitopssync.Flux(kube.Config, opts)
	require.NoError(t, err)
	return syncWith("flux apply", sync)
}

// argoSync syncs as Argo CD's application controller does, in an
// Application that applies client-side or, with appServerSide, one with
// ServerSideApply=true: each Job's sync options, and its live copy's, are
// read by Argo CD's own code.
func argoSync(appServerSide bool) syncer {
	return func(t *testing.T, ns string, objs []*unstructured.Unstructured) error {
		sync := gitopssync.ArgoCD(testtool.Find(t, "argocd-harness"), kube.Kubeconfig, appServerSide)
		return syncWith("argo cd sync", sync)(t, ns, objs)
	}
}

// TestChangingAJobInGitWithFlux syncs each revision with Flux's own apply
// engine (github.com/fluxcd/pkg/ssa), configured as kustomize-controller
// configures it for a Kustomization without `force: true`: server-side apply
// under its field manager, and recreation only of the objects that carry
// kustomize.toolkit.fluxcd.io/force: enabled.
func TestChangingAJobInGitWithFlux(t *testing.T) {
	t.Parallel()
	checkRevisions(t, fluxSync(t, gitopssync.FluxOptions()))
}

// TestChangingAJobInGitWithArgoCD syncs each revision as Argo CD does, in
// an Application that applies client-side (the default) and in one with
// ServerSideApply=true.
func TestChangingAJobInGitWithArgoCD(t *testing.T) {
	t.Parallel()
	for name, serverSide := range map[string]bool{"client-side apply": false, "ServerSideApply=true": true} {
		t.Run(name, func(t *testing.T) { checkRevisions(t, argoSync(serverSide)) })
	}
}

// TestChangingAJobInGitNeedsTheAnnotations is the control: without the
// annotations trainfn renders, neither tool can apply the second revision;
// and Force=true alone breaks an Application that applies server-side.
func TestChangingAJobInGitNeedsTheAnnotations(t *testing.T) {
	t.Parallel()
	without := func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		return withArgoOptions(withoutRecreation(objs), "")
	}
	forceOnly := func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		return withArgoOptions(objs, "Force=true")
	}
	for name, tc := range map[string]struct {
		sync    syncer
		edit    func([]*unstructured.Unstructured) []*unstructured.Unstructured
		failure string
		// failsFirst: even the first sync fails, as every sync would.
		failsFirst bool
	}{
		"Flux":                              {fluxSync(t, ssa.DefaultApplyOptions()), without, "field is immutable", false},
		"Argo CD":                           {argoSync(false), without, "field is immutable", false},
		"Argo CD with ServerSideApply=true": {argoSync(true), without, "field is immutable", false},
		"Argo CD with Force=true and SSA":   {argoSync(true), forceOnly, "--force cannot be used with --server-side", true},
	} {
		t.Run(name, func(t *testing.T) {
			ns := kube.Namespace(t)
			first, second := renderRevision(t, gitopsRevisions[0].spec), renderRevision(t, gitopsRevisions[1].spec)
			err := tc.sync(t, ns, tc.edit(first))
			if tc.failsFirst {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.failure)
				return
			}
			require.NoError(t, err, "the first revision applies")
			err = tc.sync(t, ns, tc.edit(second))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.failure)
		})
	}
}

func checkRevisions(t *testing.T, sync syncer) {
	ns := kube.Namespace(t)
	var before map[string]types.UID
	var podsBefore []types.UID
	for _, rev := range gitopsRevisions {
		require.NoError(t, sync(t, ns, renderRevision(t, rev.spec)), rev.what)
		jobs := kube.JobUIDs(t, ns)
		if before != nil {
			for _, name := range []string{"pi-launcher", "pi-worker"} {
				if rev.changed {
					assert.NotEqual(t, before[name], jobs[name], "%s: Job %s is created anew", rev.what, name)
				} else {
					assert.Equal(t, before[name], jobs[name], "%s: Job %s keeps running", rev.what, name)
				}
			}
			assert.Equal(t, before["other-worker"], jobs["other-worker"], "%s: a job nobody edited keeps running", rev.what)
		}
		checkJobsMetadata(t, ns, rev)
		if rev.suspended {
			checkSuspended(t, ns, rev.what)
			podsBefore = nil
		} else {
			checkWorkersRun(t, ns, rev.workers, rev.image, rev.what)
			pods := piPodUIDs(t, ns)
			if rev.podsKept {
				assert.ElementsMatch(t, podsBefore, pods, "%s: every pod of pi keeps running", rev.what)
			}
			podsBefore = pods
		}
		before = jobs
	}
}

// checkJobsMetadata checks that pi's Jobs carry the revision's labels,
// annotations, TTL and suspend, patched in place or created with them.
func checkJobsMetadata(t *testing.T, ns string, rev gitopsRevision) {
	t.Helper()
	for _, name := range []string{"pi-launcher", "pi-worker"} {
		job, err := kube.Client.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		require.NoError(t, err)
		for k, v := range rev.labels {
			assert.Equal(t, v, job.Labels[k], "%s: label %s on Job %s", rev.what, k, name)
		}
		for k, v := range rev.annotations {
			assert.Equal(t, v, job.Annotations[k], "%s: annotation %s on Job %s", rev.what, k, name)
		}
		if rev.ttl != nil {
			assert.Equal(t, rev.ttl, job.Spec.TTLSecondsAfterFinished, "%s: the TTL of Job %s", rev.what, name)
		}
		assert.Equal(t, rev.suspended, job.Spec.Suspend != nil && *job.Spec.Suspend, "%s: Job %s suspended", rev.what, name)
	}
}

// checkSuspended waits until no pod of pi is left: a suspended Job's
// controller deletes its pods.
func checkSuspended(t *testing.T, ns, what string) {
	t.Helper()
	testtool.Eventually(t, time.Minute, what+": no pod of pi left", func(context.Context) error {
		if left := piPodUIDs(t, ns); len(left) > 0 {
			return fmt.Errorf("%d pods of pi left", len(left))
		}
		return nil
	})
}

// piPodUIDs are the UIDs of pi's pods that are not being deleted.
func piPodUIDs(t *testing.T, ns string) []types.UID {
	t.Helper()
	pods, err := kube.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=pi"})
	require.NoError(t, err)
	var uids []types.UID
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			uids = append(uids, p.UID)
		}
	}
	return uids
}

// renderRevision renders a revision's specs as CI or a plugin would.
func renderRevision(t *testing.T, specs string) []*unstructured.Unstructured {
	t.Helper()
	docs, err := functions.ReadDocuments([]string{functions.Stdin}, strings.NewReader(specs))
	require.NoError(t, err)
	nodes, diags := functions.Expand(docs)
	require.False(t, diags.HasErrors(), diags.Error())
	var out []*unstructured.Unstructured
	for _, n := range nodes {
		obj := &unstructured.Unstructured{}
		require.NoError(t, sigsyaml.Unmarshal([]byte(n.MustString()), &obj.Object))
		out = append(out, obj)
	}
	return out
}

func withoutRecreation(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		a := o.GetAnnotations()
		delete(a, gitops.FluxForceAnnotation)
		delete(a, gitops.ArgoSyncOptionsAnnotation)
		o.SetAnnotations(a)
		out = append(out, o)
	}
	return out
}

// withArgoOptions replaces the Jobs' Argo CD sync options.
func withArgoOptions(objs []*unstructured.Unstructured, options string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetKind() == "Job" {
			a := o.GetAnnotations()
			if options == "" {
				delete(a, gitops.ArgoSyncOptionsAnnotation)
			} else {
				a[gitops.ArgoSyncOptionsAnnotation] = options
			}
			o.SetAnnotations(a)
		}
		out = append(out, o)
	}
	return out
}

// checkWorkersRun waits until the live pods are the revision's: as many
// workers as it asks for, with its image, and a launcher, every one owned by
// the Jobs now in the cluster.
func checkWorkersRun(t *testing.T, ns string, workers int32, image, what string) {
	t.Helper()
	testtool.Eventually(t, time.Minute, what+": the new revision's pods", func(ctx context.Context) error {
		jobs, err := kube.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		current := map[types.UID]string{}
		for _, j := range jobs.Items {
			if j.Name == "pi-worker" && (j.Spec.Completions == nil || *j.Spec.Completions != workers) {
				return testtool.GiveUp(fmt.Errorf("pi-worker has completions %v, want %d", j.Spec.Completions, workers))
			}
			current[j.UID] = j.Name
		}
		pods, err := kube.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "training.kubeflow.org/job-name=pi"})
		if err != nil {
			return err
		}
		count := map[string]int32{}
		for _, p := range pods.Items {
			owner := metav1.GetControllerOf(&p)
			if owner == nil || current[owner.UID] == "" {
				return fmt.Errorf("pod %s belongs to a Job no longer in the cluster", p.Name)
			}
			if p.Spec.Containers[0].Image != image {
				return fmt.Errorf("pod %s runs %s, want %s", p.Name, p.Spec.Containers[0].Image, image)
			}
			if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
				continue
			}
			count[current[owner.UID]]++
		}
		if count["pi-worker"] != workers || count["pi-launcher"] != 1 {
			return fmt.Errorf("running pods by Job: %v, want %d workers and a launcher", count, workers)
		}
		return nil
	})
}
