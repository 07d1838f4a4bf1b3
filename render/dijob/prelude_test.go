package dijob

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/schemas"
)

// renderSpec renders a DIJob named j with the given spec.
func renderSpec(t *testing.T, spec string) []*yaml.RNode {
	t.Helper()
	doc := yaml.MustParse("apiVersion: diengine.opendilab.org/v2alpha1\nkind: DIJob\nmetadata:\n  name: j\nspec:\n" + spec)
	out, errs := decodeCheckAndBuild(t, doc)
	require.Empty(t, errs)
	return out.Objects
}

// decodeCheckAndBuild takes a DIJob through its kind's phases as the
// pipeline does, without the passes every kind shares.
func decodeCheckAndBuild(t *testing.T, doc *yaml.RNode) (result.Output, field.ErrorList) {
	t.Helper()
	v, problems := schemas.Validate(doc, schemas.For(schemas.Kind{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()}))
	require.Empty(t, problems)
	job, _, err := DecodeV2alpha1(v, options.Default)
	require.NoError(t, err)
	if errs := job.Check(); len(errs) > 0 {
		return result.Output{}, errs
	}
	out, _, errs := job.Build()
	return out, errs
}

// runPrelude runs the rendered command of a workload's first container
// with /bin/sh, as the pod of index i would, with `env` in place of the
// user's program, and returns the DI_* variables it would see.
func runPrelude(t *testing.T, workload *yaml.RNode, i int) map[string]string {
	t.Helper()
	command, err := workload.Pipe(yaml.Lookup("spec", "template", "spec", "containers", "0", "command"))
	require.NoError(t, err)
	var argv []string
	require.NoError(t, command.YNode().Decode(&argv))
	// The user's command follows the prelude's five arguments.
	require.Greater(t, len(argv), 9)
	argv = append(argv[:9], "env")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TRAINFN_POD_INDEX=" + strconv.Itoa(i)}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	env := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "DI_") {
			env[k] = v
		}
	}
	return env
}

// upstreamTopology is DI-orchestrator's rule for the variables of rank r
// of a job of n parallel workers, written out independently of the
// prelude, with hosts named as trainfn names them.
func upstreamTopology(topology string, n, r int) map[string]string {
	host := func(rank int) string { return fmt.Sprintf("j-worker-%d.j", rank) }
	var ids []string
	for k := range n {
		ids = append(ids, strconv.Itoa(r*n+k))
	}
	env := map[string]string{"DI_RANK": strconv.Itoa(r), "DI_NODE_IDS_ARG": "--node-ids=" + strings.Join(ids, ","), "DI_ATTACHED_NODES_ARG": ""}
	if r == 0 {
		return env
	}
	switch topology {
	case "star":
		env["DI_ATTACHED_NODES_ARG"] = "--attach-to=tcp://" + host(0) + ":22270"
	case "mesh":
		var nodes []string
		for lower := range r {
			for k := range n {
				nodes = append(nodes, fmt.Sprintf("tcp://%s:%d", host(lower), 22270+k))
			}
		}
		env["DI_ATTACHED_NODES_ARG"] = "--attach-to=" + strings.Join(nodes, ",")
	}
	return env
}

func TestPreludeComputesEveryRanksTopology(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, topology := range []string{"star", "mesh", "alone"} {
		for _, n := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", topology, n), func(t *testing.T) {
				objects := renderSpec(t, fmt.Sprintf(`  minReplicas: 5
  engineFields: {topology: %s, parallelWorkers: %d}
  template:
    spec:
      containers:
      - name: di-container
        image: ding
        command: [ditask]
`, topology, n))
				workers := objects[1]
				for r := range 5 {
					got := runPrelude(t, workers, r)
					for k, want := range upstreamTopology(topology, n, r) {
						assert.Equal(t, want, got[k], "%s of rank %d", k, r)
					}
				}
			})
		}
	}
}

func TestPreludeRanksTasksAcrossTheJob(t *testing.T) {
	objects := renderSpec(t, `  tasks:
  - {name: learner, type: learner, replicas: 2, template: {spec: {containers: [{name: c, image: x, command: [ditask]}]}}}
  - {name: collector, type: collector, replicas: 3, template: {spec: {containers: [{name: c, image: x, command: [ditask]}]}}}
`)
	require.Len(t, objects, 3)
	rank := 0
	for _, workload := range objects[1:] {
		var n int
		require.NoError(t, workload.PipeE(yaml.Lookup("spec", "completions")))
		c, _ := workload.Pipe(yaml.Lookup("spec", "completions"))
		n, _ = strconv.Atoi(c.YNode().Value)
		for i := range n {
			got := runPrelude(t, workload, i)
			assert.Equal(t, strconv.Itoa(rank), got["DI_RANK"], "%s pod %d", workload.GetName(), i)
			assert.NotContains(t, got, "DI_NODE_IDS_ARG", "a job with tasks sets ditask's arguments itself")
			rank++
		}
	}
	assert.Equal(t, 5, rank)
}

func TestPreludeRefusesAPodWithoutIndex(t *testing.T) {
	objects := renderSpec(t, "  template: {spec: {containers: [{name: c, image: x, command: [ditask]}]}}\n")
	command, err := objects[1].Pipe(yaml.Lookup("spec", "template", "spec", "containers", "0", "command"))
	require.NoError(t, err)
	var argv []string
	require.NoError(t, command.YNode().Decode(&argv))
	cmd := exec.Command(argv[0], append(argv[1:9], "true")...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	assert.Error(t, err)
	assert.Contains(t, string(out), "TRAINFN_POD_INDEX")
}

func TestHostListsMustFitInAnObject(t *testing.T) {
	doc := yaml.MustParse(`apiVersion: diengine.opendilab.org/v2alpha1
kind: DIJob
metadata:
  name: j
spec:
  tasks:
  - {name: collector, type: collector, replicas: 30000, template: {spec: {containers: [{name: c, image: x, command: [ditask]}]}}}
`)
	_, errs := decodeCheckAndBuild(t, doc)
	require.Len(t, errs, 1)
	assert.Equal(t, "spec.tasks", errs[0].Field)
	assert.Contains(t, errs[0].Detail, "run fewer workers per job")
}
