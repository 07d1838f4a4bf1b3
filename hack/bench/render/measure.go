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

// runOnce runs bin with input on stdin, its output discarded unless keep,
// and fails unless it exits 0.
func runOnce(bin, input string, keep bool) (sample, []byte, error) {
	in, err := os.Open(input)
	if err != nil {
		return sample{}, nil, err
	}
	defer in.Close()
	cmd := exec.Command(bin)
	cmd.Stdin = in
	var out, stderr bytes.Buffer
	if keep {
		cmd.Stdout = &out
	} else if cmd.Stdout, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
		return sample{}, nil, err
	}
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if f, ok := cmd.Stdout.(*os.File); ok {
		f.Close()
	}
	if err != nil {
		return sample{}, nil, fmt.Errorf("%s < %s: %w: %s", bin, input, err, lastLines(stderr.String(), 5))
	}
	s := sample{wall: wall}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.peakKiB = ru.Maxrss // KiB on Linux
	}
	return s, out.Bytes(), nil
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
