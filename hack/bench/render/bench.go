package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/trainfn/trainfn/hack/bench/internal/resultsfile"
)

type config struct {
	bin, floor, out string
	runs, slowRuns  int
	slow            time.Duration
	only            *regexp.Regexp
}

func run(cfg config, w io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "trainfn-bench-")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
	previous, err := resultsfile.Read[Results](cfg.out)
	if err != nil {
		return err
	}
	now := &Results{Date: time.Now().UTC(), Commit: commit(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU()}
	for _, c := range cases() {
		if !cfg.only.MatchString(c.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: %s\n", c.name)
		r, err := measureCase(cfg, dir, c)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		now.Cases = append(now.Cases, r)
	}
	linearity(now)
	if err := table(w, now); err != nil {
		return err
	}
	if previous != nil {
		if err := compare(w, previous, now); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\nresults written to %s\n", cfg.out)
	return resultsfile.Write(cfg.out, now)
}

// measureCase renders the case once for the floor's input (that first run
// and one of the floor's warm the page cache and are not counted), then
// runs trainfn and the floor in turn.
func measureCase(cfg config, dir string, c benchCase) (CaseResult, error) {
	input, argv := c.stream(), []string{cfg.bin}
	if c.render {
		argv = append(argv, "render")
	} else {
		var err error
		if input, err = resourceList(input); err != nil {
			return CaseResult{}, err
		}
	}
	inPath, outPath := filepath.Join(dir, "input.yaml"), filepath.Join(dir, "output.yaml")
	if err := os.WriteFile(inPath, input, 0o644); err != nil {
		return CaseResult{}, err
	}
	first, output, err := runOnce(argv, inPath, true)
	if err != nil && c.target.apiLimits {
		// A job too large for the API server may be refused, with a
		// message; that is no output to time, and the target is not met.
		r := CaseResult{Name: c.name, Jobs: c.jobs, InputBytes: len(input), Refused: refusal(err)}
		r.Verdicts = []Verdict{{Target: "renders, every object within the API server's limits: refused: " + r.Refused}}
		return r, nil
	}
	if err != nil {
		return CaseResult{}, err
	}
	r := CaseResult{Name: c.name, Jobs: c.jobs, InputBytes: len(input), OutputBytes: len(output)}
	if c.render {
		if output, err = resourceList(output); err != nil {
			return CaseResult{}, err
		}
	}
	if err := os.WriteFile(outPath, output, 0o644); err != nil {
		return CaseResult{}, err
	}
	if c.target.apiLimits {
		largest, err := checkLimits(output)
		r.Largest = &largest
		r.Verdicts = append(r.Verdicts, Verdict{Target: limitsTarget(largest, err), Met: err == nil})
	}
	if _, _, err := runOnce([]string{cfg.floor}, outPath, false); err != nil {
		return CaseResult{}, err
	}
	r.Runs = cmp.Or(c.runs, cfg.runs)
	if first.wall > cfg.slow {
		r.Runs = cfg.slowRuns
	}
	var subject, floor []sample
	for range r.Runs {
		s, _, err := runOnce(argv, inPath, false)
		if err != nil {
			return CaseResult{}, err
		}
		f, _, err := runOnce([]string{cfg.floor}, outPath, false)
		if err != nil {
			return CaseResult{}, err
		}
		subject, floor = append(subject, s), append(floor, f)
		r.PairRatios = append(r.PairRatios, round2(float64(s.wall)/float64(f.wall)))
	}
	r.Trainfn, r.Floor = summarise(subject), summarise(floor)
	r.TimeRatio = round2(r.Trainfn.MedianMs / r.Floor.MedianMs)
	r.MemRatio = round2(float64(r.Trainfn.PeakKiB) / float64(r.Floor.PeakKiB))
	t := c.target
	if t.timeRatio > 0 {
		r.Verdicts = append(r.Verdicts, Verdict{fmt.Sprintf("time at most %gx the floor: %.2fx", t.timeRatio, r.TimeRatio), r.TimeRatio <= t.timeRatio})
	}
	if t.memRatio > 0 {
		r.Verdicts = append(r.Verdicts, Verdict{fmt.Sprintf("peak memory at most %gx the floor: %.2fx", t.memRatio, r.MemRatio), r.MemRatio <= t.memRatio})
	}
	if t.under > 0 {
		r.Verdicts = append(r.Verdicts, Verdict{fmt.Sprintf("under %s: %s", t.under, msText(r.Trainfn.MedianMs)), r.Trainfn.MedianMs < ms(t.under)})
	}
	return r, nil
}

// refusal is the message trainfn refused a case with.
func refusal(err error) string {
	msg := err.Error()
	if _, stderr, ok := strings.Cut(msg, "exit status 1: "); ok {
		return stderr
	}
	return msg
}

func limitsTarget(l Largest, err error) string {
	if err != nil {
		return "every object within the API server's limits: " + err.Error()
	}
	s := fmt.Sprintf("every object within the API server's limits: the largest, %s, is %s as JSON", l.Object, sizeText(l.JSONBytes))
	if l.DataBytes > 0 {
		s += fmt.Sprintf(", %s of data", sizeText(l.DataBytes))
	}
	return s
}

// linearityBound is how far the cost per job at 10,000 jobs may exceed the
// cost per job at 1,000 and still count as linear.
const linearityBound = 1.2

// linearity adds the cost per job of the mixed cases, and holds the
// largest to its ratio to the smaller's.
func linearity(r *Results) {
	var mixed []*CaseResult
	for i := range r.Cases {
		if strings.HasSuffix(r.Cases[i].Name, "mixed jobs") {
			mixed = append(mixed, &r.Cases[i])
		}
	}
	if len(mixed) < 2 {
		return
	}
	perJob := func(c *CaseResult) float64 { return c.Trainfn.MedianMs / float64(c.Jobs) }
	var parts []string
	for _, c := range mixed {
		parts = append(parts, fmt.Sprintf("%s: %.2f ms", c.Name, perJob(c)))
	}
	small, large := mixed[len(mixed)-2], mixed[len(mixed)-1]
	growth := perJob(large) / perJob(small)
	large.Verdicts = append(large.Verdicts, Verdict{
		fmt.Sprintf("linear: cost per job (%s) grows %.2fx from %s to %s, at most %.1fx", strings.Join(parts, ", "), growth, small.Name, large.Name, linearityBound),
		growth <= linearityBound})
}

func table(w io.Writer, r *Results) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tinput\toutput\truns\ttrainfn median\t(min-max)\tpeak\tfloor median\t(min-max)\tpeak\ttime\tmemory\t")
	for _, c := range r.Cases {
		if c.Refused != "" {
			fmt.Fprintf(tw, "%s\t%s\t-\t\t%s\t\t\t\t\t\t\t\t\n", c.Name, sizeText(c.InputBytes), "refused")
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t(%s-%s)\t%s\t%s\t(%s-%s)\t%s\t%.2fx\t%.2fx\t\n", c.Name,
			sizeText(c.InputBytes), sizeText(c.OutputBytes), c.Runs,
			msText(c.Trainfn.MedianMs), msText(c.Trainfn.MinMs), msText(c.Trainfn.MaxMs), sizeText(int(c.Trainfn.PeakKiB)<<10),
			msText(c.Floor.MedianMs), msText(c.Floor.MinMs), msText(c.Floor.MaxMs), sizeText(int(c.Floor.PeakKiB)<<10),
			c.TimeRatio, c.MemRatio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntime and memory are trainfn's over the floor's: a pass-through KRM function on the same kyaml, given trainfn's output")
	fmt.Fprintln(w, "\ntargets:")
	for _, c := range r.Cases {
		for _, v := range c.Verdicts {
			mark := "met    "
			if !v.Met {
				mark = "NOT MET"
			}
			fmt.Fprintf(w, "  %s  %s: %s\n", mark, c.Name, v.Target)
		}
	}
	return nil
}

func msText(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func round2(v float64) float64 { return float64(int(v*100+0.5)) / 100 }

func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
