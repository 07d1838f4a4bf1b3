package output_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/status"
	"github.com/trainfn/trainfn/status/output"
	"github.com/trainfn/trainfn/status/phase"
)

// TestATemplatePrintsEveryChange: `status -w` prints each change with the
// same Printer; a JSONPath's range must work at the second as at the
// first.
func TestATemplatePrintsEveryChange(t *testing.T) {
	for _, format := range []string{
		`jsonpath={.metadata.name} {.status.phase} {range .status.conditions[*]}{.type}={.status},{end}{"\n"}`,
		`go-template={{.metadata.name}} {{.status.phase}} {{range .status.conditions}}{{.type}}={{.status}},{{end}}{{"\n"}}`,
	} {
		p, err := output.New(format, false, false)
		require.NoError(t, err)
		var out bytes.Buffer
		for _, ph := range []phase.Phase{phase.Pending, phase.Running, phase.Succeeded} {
			job := status.Job{Name: "pi", Kind: "MPIJob", Summary: phase.Summary{Phase: ph},
				Conditions: []status.Condition{{Type: "Created", Status: "True"}}}
			require.NoError(t, p.Print(&out, []status.Job{job}, true), format)
		}
		assert.Equal(t, "pi Pending Created=True,\npi Running Created=True,\npi Succeeded Created=True,\n", out.String(), format)
	}
}

func TestFormatsAreKubectls(t *testing.T) {
	for _, format := range []string{"", "wide", "name", "json", "yaml", "jsonpath={.metadata.name}", "go-template={{.kind}}"} {
		_, err := output.New(format, false, false)
		assert.NoError(t, err, format)
	}
	for _, format := range []string{"table", "jsonpath", "jsonpath={.metadata.name", "go-template={{.kind", "custom-columns=NAME:.metadata.name"} {
		_, err := output.New(format, false, false)
		assert.Error(t, err, format)
	}
}
