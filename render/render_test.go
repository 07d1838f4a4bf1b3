package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/internal/sleepjob"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/schemas"
)

// withSleepJob is trainfn's table of kinds and one more: adding a kind is
// its package (render/internal/sleepjob) and this one line, which in
// trainfn itself is a line of kinds.go.
var withSleepJob = render.Kinds().With(render.Register("test.trainfn.dev/v1", "SleepJob", sleepjob.Decode).WithSchema(sleepjob.Schema))

func renderSleepJob(t *testing.T, text string) ([]*yaml.RNode, render.Problems) {
	t.Helper()
	return withSleepJob.Render(yaml.MustParse(text), options.Default, schemas.NewValidator())
}

// A new kind gets every pass all kinds share: here gang scheduling, the
// kind's mark on its workloads, the render digest and the warnings of what
// a saved live object carries.
func TestANewKindGetsTheSharedPasses(t *testing.T) {
	objects, problems := renderSleepJob(t, `
apiVersion: test.trainfn.dev/v1
kind: SleepJob
metadata:
  name: nap
  annotations:
    trainfn.dev/gang-scheduler: Volcano
spec:
  replicas: 3
  seconds: 5
  minAvailable: 2
status:
  active: 3
`)
	require.Empty(t, problems.Errors)
	require.Len(t, problems.Warnings, 1, "the leftover status is warned of")
	assert.Equal(t, "status", problems.Warnings[0].Field)
	assert.Equal(t, 12, problems.Warnings[0].Line, "the warning is placed in the document")

	kinds := map[string]*yaml.RNode{}
	for _, o := range objects {
		kinds[o.GetKind()] = o
	}
	require.Contains(t, kinds, "Job")
	assert.Equal(t, "SleepJob", kinds["Job"].GetLabels()[handoff.KindLabel], "the workload names the kind, as the table does")
	digest, err := kinds["Job"].Pipe(yaml.Lookup("spec", "template", "metadata", "labels", handoff.DigestLabel))
	require.NoError(t, err)
	assert.NotNil(t, digest, "the Job's pods carry the render digest")
	require.Contains(t, kinds, "PodGroup", "the gang pass gives Volcano its PodGroup")
	minMember, err := kinds["PodGroup"].Pipe(yaml.Lookup("spec", "minMember"))
	require.NoError(t, err)
	assert.Equal(t, "2", yaml.GetValue(minMember), "the kind's policy sizes the group")
	scheduler, err := kinds["Job"].Pipe(yaml.Lookup("spec", "template", "spec", "schedulerName"))
	require.NoError(t, err)
	assert.Equal(t, "volcano", yaml.GetValue(scheduler))
}

// Errors of every phase come out positioned in the document, and nothing
// renders: the schema's, the kind's own check's, and the shared checks of
// what the API server refuses.
func TestANewKindsErrorsArePlaced(t *testing.T) {
	for _, c := range []struct {
		name, doc, field, message string
		line                      int
	}{{
		name: "schema",
		doc: `apiVersion: test.trainfn.dev/v1
kind: SleepJob
metadata: {name: nap}
spec:
  seconds: soon
`,
		field: "spec.seconds", line: 5, message: "soon",
	}, {
		name: "check",
		doc: `apiVersion: test.trainfn.dev/v1
kind: SleepJob
metadata: {name: nap}
spec:
  seconds: 5
  minAvailable: 4
`,
		field: "spec.minAvailable", line: 6, message: "must be at most spec.replicas",
	}, {
		name: "metadata",
		doc: `apiVersion: test.trainfn.dev/v1
kind: SleepJob
metadata:
  name: nap
  labels:
    team: "data science"
spec:
  seconds: 5
`,
		field: "metadata.labels[team]", line: 6, message: "every object rendered from the job carries the job's labels",
	}} {
		t.Run(c.name, func(t *testing.T) {
			objects, problems := renderSleepJob(t, c.doc)
			assert.Empty(t, objects)
			require.Len(t, problems.Errors, 1, "%v", problems.Errors)
			e := problems.Errors[0]
			assert.Equal(t, c.field, e.Field)
			assert.Equal(t, c.line, e.Line)
			assert.Contains(t, e.Message, c.message)
		})
	}
}

// trainfn's own table holds the kinds it ships, and no test kind.
func TestTheTestKindIsNotShipped(t *testing.T) {
	_, ok := render.Lookup(schemas.Kind{APIVersion: "test.trainfn.dev/v1", Kind: "SleepJob"})
	assert.False(t, ok)
	_, ok = withSleepJob.Lookup(schemas.Kind{APIVersion: "test.trainfn.dev/v1", Kind: "SleepJob"})
	assert.True(t, ok)
}
