package gitops_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gitops"
	"github.com/trainfn/trainfn/render/handoff"
)

const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: pi-launcher
  annotations:
    team: research
spec:
  template:
    spec:
      containers:
      - name: launcher
        image: mpi-pi:1
`

const statefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: pi-worker
spec:
  selector:
    matchLabels:
      app: pi
  template:
    metadata:
      labels:
        app: pi
    spec:
      containers:
      - name: worker
        image: mpi-pi:1
`

const service = `apiVersion: v1
kind: Service
metadata:
  name: pi
spec:
  clusterIP: None
  selector:
    app: pi
`

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: pi-config
data:
  hostfile: |
    pi-worker-0.pi slots=1
`

func parse(t *testing.T, docs ...string) []*yaml.RNode {
	t.Helper()
	var out []*yaml.RNode
	for _, d := range docs {
		out = append(out, yaml.MustParse(d))
	}
	return out
}

func value(t *testing.T, n *yaml.RNode, path ...string) string {
	t.Helper()
	v, err := n.Pipe(yaml.Lookup(path...))
	require.NoError(t, err)
	if v == nil {
		return ""
	}
	return yaml.GetValue(v)
}

func TestStampTiesTheJobTogetherWithOneDigest(t *testing.T) {
	objs := parse(t, configMap, job, statefulSet, service)
	require.NoError(t, gitops.Stamp(objs))

	digest := value(t, objs[1], "spec", "template", "metadata", "labels", handoff.DigestLabel)
	assert.Len(t, digest, 16)
	assert.Equal(t, digest, value(t, objs[2], "spec", "template", "metadata", "labels", handoff.DigestLabel))
	assert.Equal(t, "pi", value(t, objs[2], "spec", "template", "metadata", "labels", "app"), "the template's own labels are kept")
	assert.Equal(t, "", value(t, objs[2], "spec", "selector", "matchLabels", handoff.DigestLabel), "a StatefulSet's selector is immutable")
	assert.Equal(t, digest, value(t, objs[3], "spec", "selector", handoff.DigestLabel), "old revisions' pods leave the job's names")
	assert.Equal(t, "pi", value(t, objs[3], "spec", "selector", "app"))
	assert.Empty(t, objs[0].GetAnnotations(), "a ConfigMap has no template and is patched in place")
	assert.Empty(t, objs[0].GetLabels())
}

func TestStampAsksForRecreationOfJobsOnly(t *testing.T) {
	objs := parse(t, job, statefulSet)
	require.NoError(t, gitops.Stamp(objs))

	assert.Equal(t, map[string]string{
		"team":                           "research",
		gitops.FluxForceAnnotation:       "enabled",
		gitops.ArgoSyncOptionsAnnotation: "ServerSideApply=false,Force=true",
	}, objs[0].GetAnnotations())
	assert.Empty(t, objs[1].GetAnnotations(), "a StatefulSet's template may change: it rolls")
}

func TestStampKeepsTheJobsOwnChoices(t *testing.T) {
	for _, tc := range []struct {
		name, flux, argo   string
		wantFlux, wantArgo string
	}{
		{name: "other Argo CD options", argo: "Prune=false", wantFlux: "enabled", wantArgo: "Prune=false,ServerSideApply=false,Force=true"},
		{name: "Force off", argo: "Prune=false, Force=false", wantFlux: "enabled", wantArgo: "Prune=false, Force=false"},
		{name: "Force on, needing a client-side apply", argo: "Force=true", wantFlux: "enabled", wantArgo: "Force=true,ServerSideApply=false"},
		{name: "Replace chosen", argo: "Replace=true", wantFlux: "enabled", wantArgo: "Replace=true"},
		{name: "server-side apply chosen", argo: "ServerSideApply=true", wantFlux: "enabled", wantArgo: "ServerSideApply=true"},
		{name: "Flux force chosen", flux: "disabled", wantFlux: "disabled", wantArgo: "ServerSideApply=false,Force=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := parse(t, job)
			if tc.flux != "" {
				require.NoError(t, objs[0].PipeE(yaml.SetAnnotation(gitops.FluxForceAnnotation, tc.flux)))
			}
			if tc.argo != "" {
				require.NoError(t, objs[0].PipeE(yaml.SetAnnotation(gitops.ArgoSyncOptionsAnnotation, tc.argo)))
			}
			require.NoError(t, gitops.Stamp(objs))
			assert.Equal(t, tc.wantFlux, objs[0].GetAnnotations()[gitops.FluxForceAnnotation])
			assert.Equal(t, tc.wantArgo, objs[0].GetAnnotations()[gitops.ArgoSyncOptionsAnnotation])
		})
	}
}

func digest(t *testing.T, docs ...string) string {
	t.Helper()
	d, err := gitops.Digest(parse(t, docs...))
	require.NoError(t, err)
	return d
}

func TestDigestFollowsEveryObjectOfTheJob(t *testing.T) {
	base := digest(t, configMap, job)
	assert.Equal(t, base, digest(t, configMap, job), "the same objects give the same digest")
	moreWorkers := configMap + "    pi-worker-1.pi slots=1\n"
	assert.NotEqual(t, base, digest(t, moreWorkers, job), "a change to the hostfile alone changes the launcher's digest")
	assert.NotEqual(t, base, digest(t, configMap, strings.Replace(job, "mpi-pi:1", "mpi-pi:2", 1)))
}

func TestDigestIsOfWhatPodsRun(t *testing.T) {
	base := digest(t, configMap, job, service)
	for what, edit := range map[string]func(job, service string) (string, string){
		"a label and an annotation on the Job": func(j, s string) (string, string) {
			return strings.Replace(j, "    team: research\n", "    team: vision\n  labels:\n    cost: a\n", 1), s
		},
		"the Job's fields a running Job takes": func(j, s string) (string, string) {
			return strings.Replace(j, "spec:\n", "spec:\n  ttlSecondsAfterFinished: 60\n  activeDeadlineSeconds: 600\n  suspend: true\n  backoffLimit: 3\n  maxFailedIndexes: 1\n", 1), s
		},
		"a Service": func(j, s string) (string, string) { return j, strings.Replace(s, "app: pi", "app: pi2", 1) },
	} {
		j, s := edit(job, service)
		assert.Equal(t, base, digest(t, configMap, j, s), "%s is patched in place: no pod restarts", what)
	}
	assert.Equal(t, base, digest(t, configMap, job, service, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: pi\n"), "nor do objects no pod runs")
	for what, edited := range map[string]string{
		"the pods' labels":   strings.Replace(job, "  template:\n", "  template:\n    metadata:\n      labels:\n        cost: a\n", 1),
		"an immutable field": strings.Replace(job, "spec:\n", "spec:\n  completionMode: Indexed\n", 1),
		"the Job's name":     strings.Replace(job, "name: pi-launcher", "name: pi-main", 1),
	} {
		assert.NotEqual(t, base, digest(t, configMap, edited, service), "%s restarts the job", what)
	}
}

// An elastic job's worker count is an annotation the reconciler scales its
// StatefulSet by: it says how many pods run.
func TestDigestFollowsTheReconcilersAnnotations(t *testing.T) {
	annotated := func(annotations string) string {
		return strings.Replace(statefulSet, "  name: pi-worker\n", "  name: pi-worker\n  annotations:\n"+annotations, 1)
	}
	base := digest(t, annotated("    trainfn.dev/workers: \"2\"\n"))
	assert.NotEqual(t, base, digest(t, annotated("    trainfn.dev/workers: \"3\"\n")), "another worker count restarts the job")
	assert.Equal(t, base, digest(t, annotated("    trainfn.dev/workers: \"2\"\n    team: vision\n")), "the job's own annotations do not")
}

func TestDigestIsOfContentNotPresentation(t *testing.T) {
	base := digest(t, configMap, job)
	presented := strings.NewReplacer(
		"image: mpi-pi:1", `image: "mpi-pi:1" # pinned`,
		"  name: pi-launcher\n  annotations:\n    team: research\n", "  annotations:\n    team: 'research'\n  name: pi-launcher\n",
	).Replace(job)
	require.NotEqual(t, job, presented)
	assert.Equal(t, base, digest(t, configMap, "# the launcher\n"+presented), "comments, quoting and key order restart no job")
}

func TestDigestIgnoresHelmsFileAnnotation(t *testing.T) {
	// The job's own annotations before Helm's, whose order must not change.
	annotated := strings.Replace(job, "    team: research\n", "    team: research\n    a-last-one: x\n", 1)
	plain := digest(t, configMap, annotated)
	filed := parse(t, configMap, annotated)
	for _, o := range filed {
		require.NoError(t, o.PipeE(yaml.SetAnnotation("postrenderer.helm.sh/postrender-filename", "trainfn-job/templates/job.yaml")))
	}
	withFile, err := gitops.Digest(filed)
	require.NoError(t, err)
	assert.Equal(t, plain, withFile, "Helm 3 and Helm 4 render the same digest")
	assert.Equal(t, "trainfn-job/templates/job.yaml", filed[1].GetAnnotations()["postrenderer.helm.sh/postrender-filename"], "the annotation itself stays for Helm")
}

func TestStampNamesTheKueuePodGroupAfterTheRevision(t *testing.T) {
	grouped := strings.Replace(statefulSet, "        app: pi\n", "        app: pi\n        kueue.x-k8s.io/pod-group-name: pi\n", 1)
	objs := parse(t, job, grouped)
	require.NoError(t, gitops.Stamp(objs))
	digest := value(t, objs[1], "spec", "template", "metadata", "labels", handoff.DigestLabel)
	assert.Equal(t, "pi-"+digest, value(t, objs[1], "spec", "template", "metadata", "labels", "kueue.x-k8s.io/pod-group-name"),
		"Kueue keeps a finished group's Workload by the group's name: a new revision must be a new group")
	assert.Empty(t, value(t, objs[0], "spec", "template", "metadata", "labels", "kueue.x-k8s.io/pod-group-name"), "pods in no group are left out of one")
}

func TestStampKeepsARevisionsGroupNameALabelValue(t *testing.T) {
	long := strings.Repeat("a", 63)
	objs := parse(t, strings.Replace(statefulSet, "        app: pi\n", "        app: pi\n        kueue.x-k8s.io/pod-group-name: "+long+"\n", 1))
	require.NoError(t, gitops.Stamp(objs))
	digest := value(t, objs[0], "spec", "template", "metadata", "labels", handoff.DigestLabel)
	assert.Equal(t, long[:63-17]+"-"+digest, value(t, objs[0], "spec", "template", "metadata", "labels", "kueue.x-k8s.io/pod-group-name"))
}
