package schemas

import (
	"os"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/mod/modfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compile builds the schemas without reading cue.mod/module.cue; what it
// assumes of the module must be what the file declares, which CUE's own
// tools read.
func TestCompileKeepsToTheModuleFile(t *testing.T) {
	data, err := os.ReadFile("cue.mod/module.cue")
	require.NoError(t, err)
	mod, err := modfile.Parse(data, "cue.mod/module.cue")
	require.NoError(t, err)
	path, _, _ := strings.Cut(mod.Module, "@")
	assert.Equal(t, path, modulePath)
	assert.Equal(t, mod.Language.Version, languageVersion)
}

// Compiling for validation leaves the comments out, and for export keeps
// them: the exported schemas describe their fields.
func TestCompileKeepsCommentsOnlyWhenDocumented(t *testing.T) {
	s := For(Kind{APIVersion: "kubeflow.org/v2beta1", Kind: "MPIJob"})
	field := cue.ParsePath("#MPIJobSpec.slotsPerWorker")
	_, err := Definition(s)
	require.NoError(t, err)
	assert.NotEmpty(t, documentedSchemas().packages[s.Package].LookupPath(field).Doc(), "exported with its description")
	plain := NewValidator()
	_, err = plain.schema(s)
	require.NoError(t, err)
	assert.Empty(t, plain.packages[s.Package].LookupPath(field).Doc())
}

// A schema that fails to build names its package.
func TestCompileReportsAMissingPackage(t *testing.T) {
	_, err := NewValidator().schema(Schema{Package: "./kubeflow/v9", Definition: "#MPIJob"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "./kubeflow/v9")
}
