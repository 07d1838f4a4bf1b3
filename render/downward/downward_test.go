package downward_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/downward"
	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/pod"
)

// member is a workload of pods whose template labels them and whose
// container reads fieldPath into INDEX.
func member(t *testing.T, workload, labels, fieldPath string, pods int32) gang.Member {
	t.Helper()
	w, err := yaml.Parse(workload)
	require.NoError(t, err)
	tmpl, err := yaml.Parse(`{metadata: {labels: ` + labels + `}, spec: {containers: [{name: c, env: [{name: INDEX, valueFrom: {fieldRef: {fieldPath: "` + fieldPath + `"}}}]}],
  initContainers: [{name: wait, env: [{name: INDEX, valueFrom: {fieldRef: {fieldPath: "` + fieldPath + `"}}}]}]}}`)
	require.NoError(t, err)
	return gang.Member{Workload: w, Template: pod.NewTemplate(tmpl, field.NewPath("spec", "template")), Pods: pods}
}

// read is what the member's container and init container read.
func read(m gang.Member) []string {
	var out []string
	for _, list := range []string{"containers", "initContainers"} {
		v, _ := yaml.NewRNode(m.Template.Node()).Pipe(yaml.Lookup("spec", list, "0", "env", "0", "valueFrom", "fieldRef", "fieldPath"))
		out = append(out, yaml.GetValue(v))
	}
	return out
}

const (
	indexedJob  = `{apiVersion: batch/v1, kind: Job, spec: {completionMode: Indexed}}`
	plainJob    = `{apiVersion: batch/v1, kind: Job, spec: {}}`
	statefulSet = `{apiVersion: apps/v1, kind: StatefulSet}`
	worker      = `{training.kubeflow.org/job-role: worker, training.kubeflow.org/replica-type: worker}`
	replicaIdx  = "metadata.labels['training.kubeflow.org/replica-index']"
	at          = "spec.template.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath"
)

// The index a shared template cannot carry is read from the label the
// workload's controller sets to the same value, in every container.
func TestReplicaIndexIsProvided(t *testing.T) {
	for name, tt := range map[string]struct{ workload, fieldPath, want, says string }{
		"Indexed Job": {indexedJob, replicaIdx, "metadata.labels['batch.kubernetes.io/job-completion-index']",
			"reads the pod's label training.kubeflow.org/replica-index, which no pod of this Indexed Job carries: reads batch.kubernetes.io/job-completion-index instead, " +
				"which the Indexed Job sets to the same value (its pods share one template, which cannot carry each one's index)"},
		"an annotation, on an Indexed Job": {indexedJob, "metadata.annotations['training.kubeflow.org/replica-index']",
			"metadata.annotations['batch.kubernetes.io/job-completion-index']",
			"reads the pod's annotation training.kubeflow.org/replica-index, which no pod of this Indexed Job carries: reads batch.kubernetes.io/job-completion-index instead, " +
				"which the Indexed Job sets to the same value (its pods share one template, which cannot carry each one's index)"},
		"StatefulSet": {statefulSet, replicaIdx, "metadata.labels['apps.kubernetes.io/pod-index']",
			"reads the pod's label training.kubeflow.org/replica-index, which no pod of this StatefulSet carries: reads apps.kubernetes.io/pod-index instead, " +
				"which the StatefulSet sets to the same value (its pods share one template, which cannot carry each one's index)"},
	} {
		t.Run(name, func(t *testing.T) {
			m := member(t, tt.workload, worker, tt.fieldPath, 4)
			warnings := downward.Check([]gang.Member{m})
			require.Len(t, warnings, 1, "the init container's copy is provided for, not warned of")
			assert.Equal(t, at, warnings[0].Field.String())
			assert.Equal(t, tt.says, warnings[0].Message)
			assert.Equal(t, []string{tt.want, tt.want}, read(m))
		})
	}
}

func TestUnsetLabelsWarn(t *testing.T) {
	launcherHostZero := member(t, plainJob, `{training.kubeflow.org/job-role: launcher, training.kubeflow.org/replica-index: "0"}`, "metadata.name", 1)
	for name, tt := range map[string]struct {
		members []gang.Member
		says    string
	}{
		"workers counted from 1": {[]gang.Member{launcherHostZero, member(t, indexedJob, worker, replicaIdx, 2)},
			"reads the pod's label training.kubeflow.org/replica-index, which no pod of this Indexed Job carries: read batch.kubernetes.io/job-completion-index, or JOB_COMPLETION_INDEX, " +
				"which counts the workers from 0 where the launcher, host 0 of the hostfile, makes them 1 and up"},
		"a launcher's index": {[]gang.Member{member(t, plainJob, `{training.kubeflow.org/job-role: launcher}`, replicaIdx, 1)},
			"reads the pod's label training.kubeflow.org/replica-index, which no pod of this Job carries; set it in the template's metadata.labels if the job needs it"},
		"replica type where the role is set": {[]gang.Member{member(t, indexedJob, `{training.kubeflow.org/job-role: worker}`, "metadata.labels['training.kubeflow.org/replica-type']", 2)},
			"reads the pod's label training.kubeflow.org/replica-type, which no pod of this Indexed Job carries: read training.kubeflow.org/job-role instead"},
		"a StatefulSet's index on an Indexed Job": {[]gang.Member{member(t, indexedJob, worker, "metadata.labels['apps.kubernetes.io/pod-index']", 2)},
			"reads the pod's label apps.kubernetes.io/pod-index, which no pod of this Indexed Job carries: read batch.kubernetes.io/job-completion-index, or JOB_COMPLETION_INDEX instead"},
	} {
		t.Run(name, func(t *testing.T) {
			m := tt.members[len(tt.members)-1]
			before := read(m)
			warnings := downward.Check(tt.members)
			require.Len(t, warnings, 1)
			assert.Equal(t, at, warnings[0].Field.String())
			assert.Equal(t, tt.says, warnings[0].Message)
			assert.Equal(t, before, read(m), "nothing is provided")
		})
	}
}

func TestLabelsThePodsCarryAreRead(t *testing.T) {
	for name, m := range map[string]gang.Member{
		"the template's own": member(t, plainJob, `{training.kubeflow.org/replica-index: "3"}`, replicaIdx, 1),
		"the controller's":   member(t, indexedJob, worker, "metadata.labels['batch.kubernetes.io/job-completion-index']", 2),
		"not an operator's":  member(t, indexedJob, worker, "metadata.labels['app']", 2),
		"not a label":        member(t, indexedJob, worker, "metadata.name", 2),
	} {
		t.Run(name, func(t *testing.T) {
			before := read(m)
			assert.Empty(t, downward.Check([]gang.Member{m}))
			assert.Equal(t, before, read(m))
		})
	}
}
