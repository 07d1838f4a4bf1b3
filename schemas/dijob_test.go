package schemas

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// diJob is a DIJob named name whose spec is spec, indented by two.
func diJob(name, spec string) *yaml.RNode {
	return yaml.MustParse(fmt.Sprintf(`
apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: %s
spec:
%s
`, name, spec))
}

const diTemplate = `  template:
    spec:
      containers:
      - name: di-container
        image: ding:1
        command: [ditask]`

func diTask(name, typ string) string {
	return fmt.Sprintf(`  - name: %s
    type: %s
    template: {spec: {containers: [{name: di-container, image: "ding:1", command: [ditask]}]}}`, name, typ)
}

func TestDIJobRules(t *testing.T) {
	for _, c := range []struct {
		name, field, message string
		doc                  *yaml.RNode
	}{
		{"one shape", "spec.template", "set spec.template or spec.tasks, not both",
			diJob("j", diTemplate+"\n  tasks:\n"+diTask("a", "learner"))},
		{"min at most max", "spec.maxReplicas", "must be at least minReplicas (3)",
			diJob("j", "  minReplicas: 3\n  maxReplicas: 2\n"+diTemplate)},
		{"min at least 1", "spec.minReplicas", "must be between 1 and 100000",
			diJob("j", "  minReplicas: 0\n"+diTemplate)},
		{"known topology", "spec.engineFields.topology", "ring",
			diJob("j", "  engineFields: {topology: ring}\n"+diTemplate)},
		{"parallel workers", "spec.engineFields.parallelWorkers", "must be between 1 and 1000",
			diJob("j", "  engineFields: {parallelWorkers: 0}\n"+diTemplate)},
		{"volumes with tasks", "spec.volumes", "belongs to spec.tasks' shape",
			diJob("j", "  volumes: [{name: v, emptyDir: {}}]\n"+diTemplate)},
		{"DNS task names", "spec.tasks[0].name", "must be a DNS-1035 label",
			diJob("j", "  tasks:\n"+diTask("B_c", "learner"))},
		{"task types", "spec.tasks[0].type", "lerner",
			diJob("j", "  tasks:\n"+diTask("a", "lerner"))},
		{"no bounds with tasks", "spec.minReplicas", "a job with tasks sets replicas per task",
			diJob("j", "  minReplicas: 2\n  tasks:\n"+diTask("a", "learner"))},
		{"no engine fields with tasks", "spec.engineFields", "belongs to spec.template's shape",
			diJob("j", "  engineFields: {topology: mesh}\n  tasks:\n"+diTask("a", "learner"))},
		{"preemptible needs a template", "spec.preemptible", "only a job with spec.template can be preemptible",
			diJob("j", "  preemptible: true\n  tasks:\n"+diTask("a", "learner"))},
		{"at least one task", "spec.tasks", "must not be empty",
			diJob("j", "  tasks: []")},
		{"a typo is an error", "spec.cleanPodPolcy", "",
			diJob("j", "  cleanPodPolcy: All\n"+diTemplate)},
		{"hostnames fit in a label", "metadata.name", `"` + longName + `-worker-99"`,
			diJob(longName, "  maxReplicas: 100\n"+diTemplate)},
		{"task hostnames fit in a label", "metadata.name", `"` + longName + `-collector-0"`,
			diJob(longName, "  tasks:\n"+diTask("collector", "collector"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, problems := validate(c.doc)
			require.NotEmpty(t, problems)
			var fields []string
			for _, p := range problems {
				fields = append(fields, p.Field)
				if p.Field == c.field {
					assert.Contains(t, p.Message, c.message)
					return
				}
			}
			t.Fatalf("no problem at %s; problems at %v: %v", c.field, fields, problems)
		})
	}
}

// longName leaves room for "-worker-9" but not for "-worker-99" or
// "-collector-0".
var longName = "a" + fmt.Sprintf("%053d", 0)

func TestDIJobDefaults(t *testing.T) {
	v, problems := validate(diJob("j", "  minReplicas: 2\n"+diTemplate))
	require.Empty(t, problems)
	var spec struct {
		Priority, CleanPodPolicy string
		Preemptible              bool
		BackoffLimit             int32
		MinReplicas, MaxReplicas int32
		EngineFields             struct {
			Topology        string
			ParallelWorkers int32
		}
	}
	require.NoError(t, v.Decode("spec", &spec))
	assert.Equal(t, "normal", spec.Priority)
	assert.Equal(t, "Running", spec.CleanPodPolicy)
	assert.Equal(t, int32(3), spec.BackoffLimit)
	assert.Equal(t, "star", spec.EngineFields.Topology)
	assert.Equal(t, int32(1), spec.EngineFields.ParallelWorkers)

	v, problems = validate(diJob("j", "  tasks:\n  - type: learner\n    template: {spec: {containers: [{name: c, image: x}]}}"))
	require.Empty(t, problems)
	var tasks struct{ Tasks []struct{ Name string } }
	require.NoError(t, v.Decode("spec", &tasks))
	assert.Equal(t, "learner", tasks.Tasks[0].Name, "a task's name defaults to its type")
}
