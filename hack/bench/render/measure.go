package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// sample is one process's wall time and peak resident memory.
type sample struct {
	wall    time.Duration
	peakKiB int64
}

// runOnce runs a program, argv, with input on stdin, its output discarded
// unless keep, and fails unless it exits 0.
//
// bin is started by a fresh copy of this program (see spawn), not by this
// process: at exec, Linux counts the memory of the process that started a
// program into the program's peak resident memory, and this process holds
// whole outputs of earlier cases.
func runOnce(argv []string, input string, keep bool) (sample, []byte, error) {
	self, err := os.Executable()
	if err != nil {
		return sample{}, nil, err
	}
	in, err := os.Open(input)
	if err != nil {
		return sample{}, nil, err
	}
	defer in.Close()
	report, reportW, err := os.Pipe()
	if err != nil {
		return sample{}, nil, err
	}
	defer report.Close()
	cmd := exec.Command(self, argv...)
	cmd.Env = append(os.Environ(), spawnEnv+"=1")
	cmd.Stdin = in
	cmd.ExtraFiles = []*os.File{reportW}
	var out, stderr bytes.Buffer
	if keep {
		cmd.Stdout = &out
	} else if cmd.Stdout, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		_ = reportW.Close()
		return sample{}, nil, err
	}
	cmd.Stderr = &stderr
	err = cmd.Start()
	// This process's copy of the pipe's write end, closed so that the
	// child's is the last and the read ends when it exits; and the null
	// device below: nothing written here, nothing for Close to report.
	_ = reportW.Close()
	var s sample
	if err == nil {
		_, scanErr := fmt.Fscan(report, &s.wall, &s.peakKiB)
		err = cmd.Wait()
		if err == nil && scanErr != nil {
			err = fmt.Errorf("no measurement reported: %w", scanErr)
		}
	}
	if f, ok := cmd.Stdout.(*os.File); ok {
		_ = f.Close()
	}
	if err != nil {
		return sample{}, nil, fmt.Errorf("%s < %s: %w: %s", strings.Join(argv, " "), input, err, lastLines(stderr.String(), 5))
	}
	return s, out.Bytes(), nil
}

// spawnEnv set makes this program spawn: run the program its arguments
// name and report on it.
const spawnEnv = "TRAINFN_BENCH_SPAWN"

// spawn runs args with this process's standard streams and writes to file
// descriptor 3 its wall time in nanoseconds and peak resident memory in
// KiB. It runs first thing in a fresh process, small, so its own memory
// counts for little in what it reports. It returns the exit status to
// exit with: the program's, or 1 when it could not run.
func spawn(args []string) int {
	report := os.NewFile(3, "report")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	var peakKiB int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peakKiB = ru.Maxrss // KiB on Linux
	}
	fmt.Fprintln(report, int64(wall), peakKiB)
	return cmd.ProcessState.ExitCode()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Side summarises one program's runs on a case.
type Side struct {
	MedianMs float64 `json:"medianMs"`
	MinMs    float64 `json:"minMs"`
	MaxMs    float64 `json:"maxMs"`
	// PeakKiB is the largest peak resident memory of any run.
	PeakKiB int64 `json:"peakKiB"`
}

func summarise(samples []sample) Side {
	walls := make([]time.Duration, len(samples))
	var s Side
	for i, x := range samples {
		walls[i] = x.wall
		s.PeakKiB = max(s.PeakKiB, x.peakKiB)
	}
	slices.Sort(walls)
	s.MedianMs, s.MinMs, s.MaxMs = ms(median(walls)), ms(walls[0]), ms(walls[len(walls)-1])
	return s
}

// median of sorted durations; of an even count, the mean of the middle two.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
