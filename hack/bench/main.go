// Command bench times whole trainfn processes, the way kustomize, kpt or a
// CI job pays for them, and sets each against a baseline measured in the
// same run: trainfn passing through the very output it rendered, which is
// what reading and writing that much YAML costs on its own.
//
// Usage: go run ./hack/bench -bin bin/trainfn [-runs 10]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/trainfn", "trainfn binary to time")
	runs := flag.Int("runs", 10, "runs per case")
	example := flag.String("example", "examples/jobs/pi.yaml", "the one-job example")
	flag.Parse()
	if err := run(*bin, *example, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type timing struct {
	median, min, max time.Duration
	maxRSSKiB        int64
}

func run(bin, example string, runs int) error {
	dir, err := os.MkdirTemp("", "trainfn-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	spec, err := os.ReadFile(example)
	if err != nil {
		return err
	}
	jobs := filepath.Join(dir, "jobs-1000.yaml")
	if err := os.WriteFile(jobs, manyJobs(spec, 1000), 0o644); err != nil {
		return err
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "case\tinput\toutput\tmedian\tmin\tmax\tpeak RSS\tvs baseline\t")
	for _, c := range []struct{ name, input string }{
		{"1 MPIJob", example},
		{"1000 MPIJobs", jobs},
	} {
		out := filepath.Join(dir, "out.yaml")
		rendered, err := exec.Command(bin, "render", c.input).Output()
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if err := os.WriteFile(out, rendered, 0o644); err != nil {
			return err
		}
		subject, err := measure(runs, bin, "render", c.input)
		if err != nil {
			return err
		}
		baseline, err := measure(runs, bin, "render", out)
		if err != nil {
			return err
		}
		in, _ := os.Stat(c.input)
		row(w, c.name, in.Size(), int64(len(rendered)), subject, fmt.Sprintf("%.2fx", float64(subject.median)/float64(baseline.median)))
		row(w, "  baseline: pass its output through", int64(len(rendered)), int64(len(rendered)), baseline, "1.00x")
	}
	return w.Flush()
}

func row(w *tabwriter.Writer, name string, in, out int64, t timing, ratio string) {
	fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%d MiB\t%s\t\n", name, size(in), size(out),
		ms(t.median), ms(t.min), ms(t.max), t.maxRSSKiB/1024, ratio)
}

// manyJobs repeats the example's job under n distinct names.
func manyJobs(spec []byte, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(bytes.Replace(spec, []byte("\n  name: pi\n"), fmt.Appendf(nil, "\n  name: pi-%04d\n", i), 1))
	}
	return b.Bytes()
}

// measure runs a command repeatedly, discarding its output.
func measure(runs int, name string, args ...string) (timing, error) {
	var times []time.Duration
	var t timing
	for range runs {
		cmd := exec.Command(name, args...)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return t, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		times = append(times, time.Since(start))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			t.maxRSSKiB = max(t.maxRSSKiB, ru.Maxrss)
		}
	}
	slices.Sort(times)
	t.median, t.min, t.max = times[len(times)/2], times[0], times[len(times)-1]
	return t, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
