package functions

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/test/testtool"
)

// recentFields are the fields and labels of rendered objects that recent
// Kubernetes versions added, with the minor version that turned each on by
// default (its beta or GA), from the KEPs' kep.yaml and the feature gate
// tables of the Kubernetes documentation.
var recentFields = map[string]int{
	"completionMode":          22, // IndexedJob
	"suspend":                 22, // SuspendJob
	"ttlSecondsAfterFinished": 21, // TTLAfterFinished
	"podFailurePolicy":        26, // JobPodFailurePolicy
	"podReplacementPolicy":    29, // JobPodReplacementPolicy
	"successPolicy":           31, // JobSuccessPolicy
	"managedBy":               32, // JobManagedBy
	"schedulingGates":         27, // PodSchedulingReadiness
	"batch.kubernetes.io/job-completion-index": 28, // PodIndexLabel
	"apps.kubernetes.io/pod-index":             28, // PodIndexLabel
}

// minimumVersion is docs/kubernetes-versions.md's statement of the oldest
// Kubernetes the output runs on.
var minimumVersion = regexp.MustCompile(`\*\*trainfn's output needs Kubernetes 1\.(\d+) or later\*\*`)

// TestMinimumKubernetesVersionCoversTheOutput reads every golden output for
// the recent fields it uses: each must be in the docs' table of them, and
// the minimum version the docs state must have turned every one on, unless
// the docs name the later version the field needs ("1.32 for a job with
// `runPolicy.managedBy`").
func TestMinimumKubernetesVersionCoversTheOutput(t *testing.T) {
	readme, err := os.ReadFile("../docs/kubernetes-versions.md")
	require.NoError(t, err)
	m := minimumVersion.FindSubmatch(readme)
	require.NotNil(t, m, "docs/kubernetes-versions.md states no minimum Kubernetes version")
	minimum, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)

	outputs := testtool.GoldenOutputs(t)
	used := map[string]string{}
	for _, path := range outputs {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		objects, err := (&kio.ByteReader{Reader: strings.NewReader(string(data))}).Read()
		require.NoError(t, err)
		for _, o := range objects {
			walkKeys(o.YNode(), func(key string) {
				if _, ok := recentFields[key]; ok && used[key] == "" {
					used[key] = path
				}
			})
		}
	}
	require.NotEmpty(t, used, "the goldens use none of the recent fields")
	documented := versionTable(t, string(readme))
	for key, path := range used {
		assert.Equal(t, fmt.Sprintf("1.%d", recentFields[key]), documented[key],
			"%s (first in %s): docs/kubernetes-versions.md's table of recent fields must say since when it is on by default", key, path)
		if v := recentFields[key]; v > minimum {
			later := regexp.MustCompile(`1\.` + strconv.Itoa(v) + " for [^.]*`[^`]*" + regexp.QuoteMeta(key) + "`")
			assert.Regexp(t, later, string(readme),
				"%s (in %s) is on by default from Kubernetes 1.%d, after the minimum docs/kubernetes-versions.md states, 1.%d, and it does not say so", key, path, v, minimum)
		}
	}
}

// versionTable reads docs/kubernetes-versions.md's table of recent fields:
// the version each field or label is on by default since, by its name.
func versionTable(t *testing.T, readme string) map[string]string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "# Kubernetes versions\n")
	require.True(t, ok, "docs/kubernetes-versions.md has no title Kubernetes versions")
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`([^`:]+)")
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 {
			continue
		}
		if m := name.FindStringSubmatch(cells[1]); m != nil {
			out[m[1]] = strings.TrimSpace(cells[3])
		}
	}
	return out
}

// walkKeys calls f with every mapping key and every label key under n.
func walkKeys(n *yaml.Node, f func(string)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			f(n.Content[i].Value)
		}
	}
	for _, c := range n.Content {
		walkKeys(c, f)
	}
}
