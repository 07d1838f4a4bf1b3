package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	log "github.com/sirupsen/logrus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/health"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/util/lua"
)

// The shipped health check, the Helm values holding the same script, and
// the live states the Flux test reads too.
const (
	checkPatch  = "../../../examples/argocd/health/argocd-cm-patch.yaml"
	checkValues = "../../../examples/argocd/health/values.yaml"
	corpusPath  = "../../../test/jobhealth/testdata/objects.yaml"
	// noCheck is an argocd-cm with no customization: Argo CD's own health
	// checks alone, its embedded Lua ones included.
	noCheck = "testdata/argocd-cm.yaml"
)

// corpusEntry is a live state of a workload and Argo CD's built-in
// health of it.
type corpusEntry struct {
	State  string              `json:"state"`
	ArgoCD health.HealthStatus `json:"argocd"`
	Object json.RawMessage     `json:"object"`
}

func readCorpus(t *testing.T) map[string]corpusEntry {
	t.Helper()
	b, err := os.ReadFile(corpusPath)
	require.NoError(t, err)
	var entries []corpusEntry
	require.NoError(t, yaml.Unmarshal(b, &entries))
	corpus := map[string]corpusEntry{}
	for _, e := range entries {
		require.NotContains(t, corpus, e.State, "two entries for one state")
		corpus[e.State] = e
	}
	require.NotEmpty(t, corpus)
	return corpus
}

// live decodes an entry's object as the controller's cache holds it
// (integers as int64, as a JSON decode by unstructured gives them).
func (e corpusEntry) live(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(e.Object), e.State)
	return u
}

func overridesOf(t *testing.T, path string) map[string]v1alpha1.ResourceOverride {
	t.Helper()
	log.SetLevel(log.WarnLevel)
	o, err := readResourceOverrides(path)
	require.NoError(t, err)
	return o
}

func healthWith(t *testing.T, obj *unstructured.Unstructured, overrides map[string]v1alpha1.ResourceOverride) health.HealthStatus {
	t.Helper()
	h, err := health.GetResourceHealth(obj, lua.ResourceHealthOverrides(overrides))
	require.NoError(t, err, obj.GetName())
	require.NotNil(t, h, obj.GetName())
	return *h
}

// trainfnWorkload marks an object as trainfn renders it, and as its
// reconciler marks it once the job ended (ended "" for a job not ended).
func trainfnWorkload(obj *unstructured.Unstructured, kind, ended, cleanPodPolicy string) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["training.kubeflow.org/operator-name"] = "trainfn"
	labels["trainfn.dev/job-kind"] = kind
	obj.SetLabels(labels)
	annotations := map[string]string{"trainfn.dev/clean-pod-policy": cleanPodPolicy}
	if ended != "" {
		annotations["trainfn.dev/ended"] = ended
	}
	obj.SetAnnotations(annotations)
	return obj
}

// TestBuiltInHealth pins what Argo CD's own checks make of each live state,
// the table docs/argocd.md shows.
func TestBuiltInHealth(t *testing.T) {
	builtIn := overridesOf(t, noCheck)
	for _, e := range readCorpus(t) {
		assert.Equal(t, e.ArgoCD, healthWith(t, e.live(t), builtIn), e.State)
	}
}

// TestJobCheckIsBuiltInElsewhere runs the shipped Lua through Argo CD's
// code, as its controller does, against gitops-engine's Go check: the same
// status and message on every Job trainfn did not render, and on trainfn's
// Jobs that did not end but a resumed one, which runs.
func TestJobCheckIsBuiltInElsewhere(t *testing.T) {
	builtIn, check := overridesOf(t, noCheck), overridesOf(t, checkPatch)
	require.NotEmpty(t, check["batch/Job"].HealthLua)
	jobs := edgeJobs(t)
	for _, e := range readCorpus(t) {
		if obj := e.live(t); obj.GetKind() == "Job" {
			jobs[e.State] = obj
		}
	}
	for state, obj := range jobs {
		for name, v := range map[string]*unstructured.Unstructured{
			"not trainfn's":                   obj,
			"not trainfn's, marked as ending": markedNotTrainfn(obj),
		} {
			assert.Equal(t, healthWith(t, v, builtIn), healthWith(t, v, check), "%s, %s", state, name)
		}
		for name, v := range map[string]*unstructured.Unstructured{
			"trainfn's, not ended":      trainfnWorkload(obj, "MPIJob", "", "Running"),
			"trainfn's, an unknown end": trainfnWorkload(obj, "MPIJob", "Stopped", "Running"),
		} {
			want := healthWith(t, v, builtIn)
			if resumed(v) {
				// The one difference: a resumed trainfn Job runs.
				require.Equal(t, health.HealthStatusHealthy, want.Status, state)
				want.Status = health.HealthStatusProgressing
			}
			assert.Equal(t, want, healthWith(t, v, check), "%s, %s", state, name)
		}
	}
}

// resumed tells a Job that was resumed and has not ended: its Suspended
// condition is False, and it has no Complete or Failed one.
func resumed(job *unstructured.Unstructured) bool {
	conditions, _, _ := unstructured.NestedSlice(job.Object, "status", "conditions")
	isResumed := false
	for _, c := range conditions {
		c, _ := c.(map[string]any)
		switch c["type"] {
		case "Complete", "Failed":
			return false
		case "Suspended":
			isResumed = c["status"] == "False"
		}
	}
	return isResumed
}

// markedNotTrainfn is a Job another tool rendered that carries trainfn's
// mark: the mark alone does not count.
func markedNotTrainfn(obj *unstructured.Unstructured) *unstructured.Unstructured {
	obj = obj.DeepCopy()
	obj.SetLabels(map[string]string{"training.kubeflow.org/operator-name": "training-operator"})
	obj.SetAnnotations(map[string]string{"trainfn.dev/ended": "Succeeded"})
	return obj
}

// edgeJobs are shapes the Job controller does not write, for the Lua to
// follow the Go check on them too: no metadata labels, conditions with
// no message, a Complete condition that is False (matched by type).
func edgeJobs(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	docs := map[string]string{
		"no status": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"}}`,
		"empty conditions": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"},
			"status":{"conditions":[]}}`,
		"conditions without messages": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"},
			"status":{"conditions":[{"type":"Suspended","status":"True"},{"type":"Complete","status":"True"}]}}`,
		"complete false": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"},
			"status":{"conditions":[{"type":"Complete","status":"False","message":"not yet"}]}}`,
		"failed message emptied": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"},
			"status":{"conditions":[{"type":"Failed","status":"True","message":"first"},{"type":"Failed","status":"True"}]}}`,
		"suspended then complete": `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"a"},
			"status":{"conditions":[{"type":"Suspended","status":"True","message":"s"},{"type":"Complete","status":"True","message":"c"}]}}`,
	}
	jobs := map[string]*unstructured.Unstructured{}
	for name, doc := range docs {
		u := &unstructured.Unstructured{}
		require.NoError(t, u.UnmarshalJSON([]byte(doc)), name)
		jobs[name] = u
	}
	return jobs
}

// TestJobCheckReadsTheEnd gives a trainfn Job that ended the job's
// outcome, whatever state the Job itself is in.
func TestJobCheckReadsTheEnd(t *testing.T) {
	builtIn, check := overridesOf(t, noCheck), overridesOf(t, checkPatch)
	succeeded := health.HealthStatus{Status: health.HealthStatusHealthy, Message: "The training job succeeded (trainfn.dev/ended); its workers are stopped"}
	failed := health.HealthStatus{Status: health.HealthStatusDegraded, Message: "The training job failed (trainfn.dev/ended); its workers are stopped"}
	for _, e := range readCorpus(t) {
		obj := e.live(t)
		if obj.GetKind() != "Job" {
			continue
		}
		for _, kind := range []string{"MPIJob", "PyTorchJob", "DIJob", "TrainJob"} {
			assert.Equal(t, succeeded, healthWith(t, trainfnWorkload(obj, kind, "Succeeded", "Running"), check), "%s %s", kind, e.State)
			assert.Equal(t, failed, healthWith(t, trainfnWorkload(obj, kind, "Failed", "All"), check), "%s %s", kind, e.State)
		}
		runOn := healthWith(t, trainfnWorkload(obj, "PyTorchJob", "Succeeded", "None"), check)
		assert.Equal(t, "The training job succeeded (trainfn.dev/ended); its workers run on (cleanPodPolicy None)", runOn.Message, e.State)
	}
	// The case the check is for: the built-in check calls a finished job's
	// stopped workers Suspended.
	stopped := trainfnWorkload(readCorpus(t)["stopped"].live(t), "PyTorchJob", "Succeeded", "Running")
	assert.Equal(t, health.HealthStatusSuspended, healthWith(t, stopped, builtIn).Status)
}

// TestShippedScriptsAgree holds the Helm values' script to the patch's.
func TestShippedScriptsAgree(t *testing.T) {
	var values struct {
		Configs struct {
			CM map[string]string `json:"cm"`
		} `json:"configs"`
	}
	b, err := os.ReadFile(checkValues)
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(b, &values))
	require.Len(t, values.Configs.CM, 1)
	script := values.Configs.CM["resource.customizations.health.batch_Job"]
	require.NotEmpty(t, script)
	assert.Equal(t, overridesOf(t, checkPatch)["batch/Job"].HealthLua, script)
}

// TestHealthCommand runs the subcommand as the node tests do: a List and
// a stream of objects on standard input.
func TestHealthCommand(t *testing.T) {
	corpus := readCorpus(t)
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range []*unstructured.Unstructured{
		trainfnWorkload(corpus["complete"].live(t), "MPIJob", "", "Running"),
		trainfnWorkload(corpus["stopped"].live(t), "MPIJob", "Succeeded", "Running"),
	} {
		list.Items = append(list.Items, *o)
	}
	listJSON, err := list.MarshalJSON()
	require.NoError(t, err)
	in := string(listJSON) + "\n---\n" + configMap + "---\n" + hook

	var out strings.Builder
	require.Equal(t, 0, healthOf([]string{"--argocd-cm", checkPatch}, strings.NewReader(in), &out))
	assert.Equal(t, strings.Join([]string{
		"batch/Job\ttraining/pi-worker\tHealthy\tReached expected number of succeeded pods",
		"batch/Job\ttraining/pi-worker\tHealthy\tThe training job succeeded (trainfn.dev/ended); its workers are stopped",
		"/ConfigMap\ttraining/pi-config\t-\tno health check",
		"batch/Job\ttraining/migrate\t-\ta hook: not counted",
		"Application\tHealthy",
		"",
	}, "\n"), out.String())

	out.Reset()
	require.Equal(t, 0, healthOf([]string{"--argocd-cm", noCheck}, strings.NewReader(in), &out))
	assert.Contains(t, out.String(), "Application\tSuspended\n")
}

const configMap = `apiVersion: v1
kind: ConfigMap
metadata: {name: pi-config, namespace: training}
`

// hook is a failed Job Argo CD runs as a sync hook: never counted.
const hook = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: training
  annotations: {argocd.argoproj.io/hook: PreSync}
status:
  conditions: [{type: Failed, status: "True", message: failed}]
`

// TestHealthCommandRefusesBadInput exits 2, with nothing on standard
// output, on input it cannot read.
func TestHealthCommandRefusesBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		args []string
		in   string
	}{
		"no argocd-cm":         {nil, configMap},
		"another ConfigMap":    {[]string{"--argocd-cm", corpusPath}, configMap},
		"no object":            {[]string{"--argocd-cm", checkPatch}, ""},
		"no kind":              {[]string{"--argocd-cm", checkPatch}, "metadata: {name: a}\n"},
		"not YAML":             {[]string{"--argocd-cm", checkPatch}, "kind: [\n"},
		"an argument too many": {[]string{"--argocd-cm", checkPatch, "x"}, configMap},
	} {
		var out strings.Builder
		assert.Equal(t, 2, healthOf(c.args, strings.NewReader(c.in), &out), name)
		assert.Empty(t, out.String(), name)
	}
}
