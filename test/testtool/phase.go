package testtool

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// PhasesEnv names the file a run's phases are recorded in, a line each:
// "NAME<TAB>SECONDS<TAB>EXIT STATUS", as hack/phase.sh writes them (which
// adds how busy the cores were; a suite's own phase leaves that out).
const PhasesEnv = "TRAINFN_PHASES"

// RecordPhase records a phase of a suite's own, such as starting a node,
// in the run's table of phases, when the run keeps one.
func RecordPhase(name string, took time.Duration, failed bool) {
	path := os.Getenv(PhasesEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "recording phase %s: %v\n", name, err)
		return
	}
	status := 0
	if failed {
		status = 1
	}
	_, err = fmt.Fprintf(f, "%s\t%.1f\t%d\n", name, took.Seconds(), status)
	if err = errors.Join(err, f.Close()); err != nil {
		fmt.Fprintf(os.Stderr, "recording phase %s: %v\n", name, err)
	}
}
