package testtool

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tools module (hack/tools) builds the tools the tests run on
// Kubernetes' libraries, and does so at the versions the main module
// requires of every module the two share: a package compiles once, then,
// for the tests and for every tool (hack/build-tools.sh). A version bumped
// in one go.mod and not the other compiles those packages twice, minutes
// of a cold CI run; this test says which.
func TestToolsModuleHasTheMainModulesVersions(t *testing.T) {
	root := repoRoot()
	mainModule := requirements(t, filepath.Join(root, "go.mod"))
	tools := requirements(t, filepath.Join(root, "hack", "tools", "go.mod"))
	shared := 0
	for path, version := range mainModule {
		got, ok := tools[path]
		if !ok {
			continue
		}
		shared++
		assert.Equal(t, version, got, "%s: the main module requires %s, the tools module %s; give both the same version", path, version, got)
	}
	require.Greater(t, shared, 50, "the two modules share the Kubernetes libraries and theirs")
}

var (
	requireLine = regexp.MustCompile(`^(?:require\s+)?(\S+)\s+(v\S+)(?:\s*//.*)?$`)
	replaceLine = regexp.MustCompile(`^(?:replace\s+)?(\S+)(?:\s+v\S+)?\s+=>\s+(\S+)\s+(v\S+)$`)
)

// requirements are the versions a go.mod selects: its requirements, as
// its replacements by another version of the same module change them.
func requirements(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	versions, replaced := map[string]string{}, map[string]string{}
	block := ""
	scan := bufio.NewScanner(f)
	for scan.Scan() {
		line := strings.TrimSpace(scan.Text())
		switch {
		case strings.HasSuffix(line, "("):
			block = strings.Fields(line)[0]
			continue
		case line == ")":
			block = ""
			continue
		}
		if block == "replace" || strings.HasPrefix(line, "replace ") {
			if m := replaceLine.FindStringSubmatch(line); len(m) == 4 && m[1] == m[2] {
				replaced[m[1]] = m[3]
			}
		} else if block == "require" || strings.HasPrefix(line, "require ") {
			if m := requireLine.FindStringSubmatch(line); len(m) == 3 {
				versions[m[1]] = m[2]
			}
		}
	}
	require.NoError(t, scan.Err())
	for p, v := range replaced {
		versions[p] = v
	}
	return versions
}
