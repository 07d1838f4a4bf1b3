package functions_test

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
)

var updateDigests = flag.Bool("update-digests", false, "rewrite testdata/digests.golden; each changed line restarts every applied job like it on upgrade: say so in CHANGELOG.md")

// digestsGolden pins the render digest of every job in the repository's
// reviewed outputs (each kind's golden cases, the examples' expected
// output). make golden rewrites those outputs, not this file: a digest
// that changes there fails here, so that a release that would restart
// running jobs is a choice, said in CHANGELOG.md, not an accident.
const digestsGolden = "testdata/digests.golden"

func TestDigestsArePinned(t *testing.T) {
	var lines []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Name() != "expected.yaml" && !strings.HasSuffix(path, filepath.Join(".expected", "output.yaml")) {
			return nil
		}
		found, err := digestsOf(path)
		lines = append(lines, found...)
		return err
	})
	require.NoError(t, err)
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	if *updateDigests {
		require.NoError(t, os.WriteFile(digestsGolden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(digestsGolden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "a job's render digest changed: upgrading to this change restarts every applied job like it. "+
		"If that is intended, say so in CHANGELOG.md and run go test ./functions -run TestDigestsArePinned -update-digests")
}

// digestsOf are the lines "<file> <Kind> <job> <digest>" of the jobs in a
// reviewed output, once each.
func digestsOf(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	objects, err := (&kio.ByteReader{Reader: f, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, o := range objects {
		digest, err := o.Pipe(yaml.Lookup("spec", "template", "metadata", "labels", handoff.DigestLabel))
		if err != nil || digest == nil {
			continue
		}
		job := o.GetLabels()[handoff.JobNameLabel]
		if ns := o.GetNamespace(); ns != "" {
			job = ns + "/" + job
		}
		line := fmt.Sprintf("%s %s %s %s", filepath.ToSlash(path[len("../"):]), o.GetLabels()[handoff.KindLabel], job, yaml.GetValue(digest))
		if !slices.Contains(out, line) {
			out = append(out, line)
		}
	}
	return out, nil
}
