// Package cli is what trainfn's commands share around cobra: exit statuses
// and the version they report.
package cli

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// ExitError carries an exit status past cobra; what it says is already
// written. Commands return it for every failure of their own, so any other
// error is cobra's: a wrong command line, exit status 2.
type ExitError int

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Execute runs root with args and returns the exit status, writing a
// command-line error to stderr after the program's name.
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	err := root.Execute()
	var code ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintf(stderr, "%s: %v\n", root.Name(), err)
		return 2
	}
}

// NoCommandArgs refuses arguments to a root command that runs with none,
// as cobra.NoArgs does, and suggests the command a mistyped one meant
// (`render` for `rendr`), which cobra does only for a root command whose
// Args is unset.
func NoCommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	err := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if suggestions := cmd.SuggestionsFor(args[0]); len(suggestions) > 0 {
		err += fmt.Sprintf(" (did you mean %s?)", strings.Join(suggestions, " or "))
	}
	return errors.New(err)
}

// Version is set, the version a binary was given at build time (-ldflags
// "-X main.version=..."), or else the module version it was built from.
func Version(set string) string {
	if set != "" {
		return set
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// VersionCommand is the version subcommand of program: one line, the
// program's name and Version(set).
func VersionCommand(program, set string, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print " + program + "'s version",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintln(stdout, program, Version(set))
		},
	}
}
