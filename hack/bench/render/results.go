package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Results are one run's figures, as the results file keeps them for a
// later run to compare against.
type Results struct {
	Date      time.Time    `json:"date"`
	Commit    string       `json:"commit"`
	GoVersion string       `json:"goVersion"`
	CPUs      int          `json:"cpus"`
	Cases     []CaseResult `json:"cases"`
}

// CaseResult is what one case measured.
type CaseResult struct {
	Name        string  `json:"name"`
	Jobs        int     `json:"jobs"`
	Runs        int     `json:"runs"`
	InputBytes  int     `json:"inputBytes"`
	OutputBytes int     `json:"outputBytes"`
	Trainfn     Side    `json:"trainfn"`
	Floor       Side    `json:"floor"`
	TimeRatio   float64 `json:"timeRatio"`
	MemRatio    float64 `json:"memRatio"`
	// PairRatios are trainfn's time over the floor's, run by run.
	PairRatios []float64 `json:"pairRatios"`
	Largest    *Largest  `json:"largest,omitempty"`
	// Refused is trainfn's message when it refused the case's input.
	Refused  string    `json:"refused,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
}

// Verdict is one target, met or not.
type Verdict struct {
	Target string `json:"target"`
	Met    bool   `json:"met"`
}

// compare prints, for every case both runs measured, trainfn's median and
// its ratio to the floor then and now.
func compare(w io.Writer, old, now *Results) error {
	before := map[string]CaseResult{}
	for _, c := range old.Cases {
		before[c.Name] = c
	}
	fmt.Fprintf(w, "\nagainst the previous results (%s, %s):\n", old.Commit, old.Date.Format(time.DateTime))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\ttrainfn then\tnow\tnow/then\tvs floor then\tnow\t")
	for _, c := range now.Cases {
		b, ok := before[c.Name]
		if !ok || b.Trainfn.MedianMs == 0 || c.Trainfn.MedianMs == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2fx\t%.2fx\t%.2fx\t\n", c.Name, msText(b.Trainfn.MedianMs), msText(c.Trainfn.MedianMs),
			c.Trainfn.MedianMs/b.Trainfn.MedianMs, b.TimeRatio, c.TimeRatio)
	}
	return tw.Flush()
}
