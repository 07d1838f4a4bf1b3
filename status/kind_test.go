package status_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/phase"
	"github.com/trainfn/trainfn/test/testtool"
)

// TestKindOfRenderedOutputs reads the kind of every job trainfn's golden
// cases render, and expects the kind of the spec it was rendered from, for
// every kind in the table.
func TestKindOfRenderedOutputs(t *testing.T) {
	var inputs []string
	for _, dir := range testtool.GoldenDirs(t) {
		inputs = append(inputs, filepath.Join(dir, "input.yaml"))
	}
	checked := map[string]int{}
	for _, input := range inputs {
		expected := filepath.Join(filepath.Dir(input), "expected.yaml")
		if info, err := os.Stat(expected); err != nil || info.Size() == 0 {
			continue // an error case: nothing rendered
		}
		kinds := map[string]map[string]bool{} // job name: its specs' kinds
		for _, doc := range documents(t, input) {
			var spec struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			require.NoError(t, yaml.Unmarshal(doc, &spec))
			if kinds[spec.Metadata.Name] == nil {
				kinds[spec.Metadata.Name] = map[string]bool{}
			}
			kinds[spec.Metadata.Name][spec.Kind] = true
		}
		// A name two specs give (a PyTorchJob and the TrainJob made of
		// it) is two jobs, one of each kind.
		got := map[string]map[string]bool{}
		for ref, objs := range renderedJobs(t, expected) {
			name, _, _ := strings.Cut(ref, "/")
			if kinds[name] == nil || len(objs.Jobs)+len(objs.StatefulSets) == 0 {
				// Rendered from a spec this case gives no name of its
				// own, or objects of no workload (Services, ConfigMaps).
				continue
			}
			if got[name] == nil {
				got[name] = map[string]bool{}
			}
			kind := status.KindOf(objs)
			got[name][kind] = true
			checked[kind]++
		}
		for name, want := range got {
			assert.Equal(t, kinds[name], want, "%s: the kinds of the jobs named %s", input, name)
		}
	}
	for _, kind := range render.Kinds() {
		assert.NotZero(t, checked[kind.Kind.Kind], "no golden case renders a %s", kind.Kind)
	}
	t.Logf("jobs checked, by kind: %v", checked)
}

func TestKindOfUnknown(t *testing.T) {
	assert.Equal(t, status.UnknownKind, status.KindOf(phase.Objects{
		Jobs: []batchv1.Job{*job("ns", "j", "j-worker", handoff.RoleWorker, 1, 0)},
	}))
}

// renderedJobs reads a rendered output's Jobs and StatefulSets, by the
// job they belong to: "name/kind", of their job-name and job-kind labels.
func renderedJobs(t *testing.T, path string) map[string]phase.Objects {
	jobs := map[string]phase.Objects{}
	for _, doc := range documents(t, path) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal(doc, &head))
		name, ok := head.Metadata.Labels[handoff.JobNameLabel]
		if !ok {
			continue
		}
		name += "/" + head.Metadata.Labels[handoff.KindLabel]
		objs := jobs[name]
		switch head.Kind {
		case "Job":
			var j batchv1.Job
			require.NoError(t, yaml.Unmarshal(doc, &j))
			objs.Jobs = append(objs.Jobs, j)
		case "StatefulSet":
			var s appsv1.StatefulSet
			require.NoError(t, yaml.Unmarshal(doc, &s))
			objs.StatefulSets = append(objs.StatefulSets, s)
		case "Pod":
			var p corev1.Pod
			require.NoError(t, yaml.Unmarshal(doc, &p))
			objs.Pods = append(objs.Pods, p)
		}
		jobs[name] = objs
	}
	return jobs
}

// documents splits a YAML stream into its documents.
func documents(t *testing.T, path string) [][]byte {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		require.NoError(t, err, path)
		if strings.TrimSpace(string(doc)) != "" && !bytes.Equal(bytes.TrimSpace(doc), []byte("---")) {
			docs = append(docs, doc)
		}
	}
}
