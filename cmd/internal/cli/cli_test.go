package cli

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

func TestExecute(t *testing.T) {
	root := func(err error) *cobra.Command {
		return &cobra.Command{Use: "tool", SilenceErrors: true, SilenceUsage: true, Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error { return err }}
	}
	var stderr bytes.Buffer
	assert.Equal(t, 0, Execute(root(nil), nil, &stderr))
	assert.Equal(t, 1, Execute(root(ExitError(1)), nil, &stderr), "a command's own failure, already reported")
	assert.Empty(t, stderr.String())
	assert.Equal(t, 2, Execute(root(nil), []string{"extra"}, &stderr), "a wrong command line")
	assert.Contains(t, stderr.String(), "tool: unknown command")
}

func TestVersion(t *testing.T) {
	assert.Equal(t, "v1.2.3", Version("v1.2.3"))
	assert.NotEmpty(t, Version(""), "the module's version, or (devel)")
}

func TestVersionCommand(t *testing.T) {
	var stdout bytes.Buffer
	cmd := VersionCommand("tool", "v1.2.3", &stdout)
	cmd.SetArgs(nil)
	assert.NoError(t, cmd.Execute())
	assert.Equal(t, "tool v1.2.3\n", stdout.String())
}
