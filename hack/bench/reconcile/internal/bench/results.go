package bench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Results are one run's figures, as the results file keeps them for a
// later run to compare against.
type Results struct {
	Mode      string    `json:"mode"`
	Date      time.Time `json:"date"`
	Commit    string    `json:"commit"`
	GoVersion string    `json:"goVersion"`
	CPUs      int       `json:"cpus"`
	Nodes     int       `json:"nodes"`
	Coalesce  string    `json:"coalesce"`
	Gap       string    `json:"gap"`
	Client    string    `json:"client"`
	Samples   int       `json:"samples"`
	Seconds   float64   `json:"seconds"`
	Discovery []Size    `json:"discovery"`
	Memory    Memory    `json:"memory"`
}

// Size is what one job size measured.
type Size struct {
	Workers int `json:"workers"`
	// StartupSeconds is from applying the job to the script listing every
	// worker: mostly the controller manager creating pods.
	StartupSeconds float64 `json:"startupSeconds"`
	// NotReady and Ready are the one-at-a-time changes' latencies.
	NotReady Latency `json:"notReady"`
	Ready    Latency `json:"ready"`
	Changes  int     `json:"changes"`
	// PerChange is the reconciler's cost over those changes, divided by
	// their number.
	PerChange     Counts `json:"perChange"`
	BurstNotReady Burst  `json:"burstNotReady"`
	BurstReady    Burst  `json:"burstReady"`
}

// Latency summarises durations, in milliseconds.
type Latency struct {
	Samples  int     `json:"samples"`
	MedianMs float64 `json:"medianMs"`
	P90Ms    float64 `json:"p90Ms"`
	MinMs    float64 `json:"minMs"`
	MaxMs    float64 `json:"maxMs"`
}

// Counts are deltas of the reconciler's metrics.
type Counts struct {
	Requests        float64            `json:"requests"`
	RequestsBy      map[string]float64 `json:"requestsByMethod,omitempty"`
	Writes          float64            `json:"writes"`
	WritesBy        map[string]float64 `json:"writesByKind,omitempty"`
	DiscoveryWrites float64            `json:"discoveryWrites"`
	CPUMs           float64            `json:"cpuMs"`
}

// Burst is what one burst of changes cost, in all.
type Burst struct {
	Pods int `json:"pods"`
	// LatencyMs is from the last status patch answered to the script
	// taking in every change.
	LatencyMs float64 `json:"latencyMs"`
	// ScriptVersions are the ConfigMap versions the watch saw.
	ScriptVersions int    `json:"scriptVersions"`
	Counts         Counts `json:"counts"`
}

// Memory is the memory figure.
type Memory struct {
	Workers        int       `json:"workers"`
	UnrelatedPods  int       `json:"unrelatedPods"`
	Namespaces     int       `json:"namespaces"`
	UnrelatedState string    `json:"unrelatedState"`
	CreateSeconds  float64   `json:"createSeconds"`
	Baseline       Footprint `json:"baseline"`
	Loaded         Footprint `json:"loaded"`
	// Ratio is Loaded's peak over Baseline's.
	Ratio float64 `json:"ratio"`
}

// Footprint is one reconciler process's memory, in KiB.
type Footprint struct {
	PeakKiB int64 `json:"peakKiB"` // VmHWM
	RSSKiB  int64 `json:"rssKiB"`  // VmRSS when read
	HeapKiB int64 `json:"heapKiB"` // go_memstats_heap_inuse_bytes
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// latency summarises durations; percentiles are nearest-rank, so every
// figure is a duration that was measured.
func latency(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration { return s[max(0, int(math.Ceil(p*float64(len(s))))-1)] }
	return Latency{Samples: len(s), MedianMs: ms(rank(0.5)), P90Ms: ms(rank(0.9)), MinMs: ms(s[0]), MaxMs: ms(s[len(s)-1])}
}

// figure is one number a later run compares.
type figure struct {
	name  string
	value float64
}

// figures are the results' comparable numbers, named the same from run to
// run: a figure missing on either side is not compared.
func (r *Results) figures() []figure {
	var out []figure
	add := func(name string, v float64) { out = append(out, figure{name, v}) }
	for _, s := range r.Discovery {
		p := fmt.Sprintf("%d workers: ", s.Workers)
		add(p+"all listed (s)", s.StartupSeconds)
		for _, l := range []struct {
			name string
			l    Latency
		}{{"not ready", s.NotReady}, {"ready", s.Ready}} {
			add(p+l.name+" median (ms)", l.l.MedianMs)
			add(p+l.name+" p90 (ms)", l.l.P90Ms)
			add(p+l.name+" min (ms)", l.l.MinMs)
			add(p+l.name+" max (ms)", l.l.MaxMs)
		}
		add(p+"requests per change", s.PerChange.Requests)
		add(p+"writes per change", s.PerChange.Writes)
		add(p+"CPU per change (ms)", s.PerChange.CPUMs)
		for _, b := range []struct {
			name string
			b    Burst
		}{{"burst not ready", s.BurstNotReady}, {"burst ready", s.BurstReady}} {
			add(p+b.name+" writes", b.b.Counts.Writes)
			add(p+b.name+" discovery writes", b.b.Counts.DiscoveryWrites)
			add(p+b.name+" requests", b.b.Counts.Requests)
			add(p+b.name+" latency (ms)", b.b.LatencyMs)
		}
	}
	add("memory: peak RSS, no unrelated pods (MiB)", mib(r.Memory.Baseline.PeakKiB))
	add(fmt.Sprintf("memory: peak RSS, %d unrelated pods (MiB)", r.Memory.UnrelatedPods), mib(r.Memory.Loaded.PeakKiB))
	add("memory: ratio", r.Memory.Ratio)
	return out
}

func mib(kib int64) float64 { return float64(kib) / 1024 }

// printResults prints the results' tables, and their ratios to a previous
// run's when there was one.
func printResults(out io.Writer, r, previous *Results, path string) {
	fmt.Fprintf(out, "trainfn-reconciler benchmark (%s): %d CPUs, %d fake nodes, --coalesce %s, %s; took %s\n",
		r.Mode, r.CPUs, r.Nodes, r.Coalesce, r.Commit, time.Duration(r.Seconds*float64(time.Second)).Round(time.Second).String())
	fmt.Fprintf(out, "reconciler's kubeconfig: %s\n", r.Client)

	fmt.Fprintf(out, "\nDiscovery latency, ms: from the answer to a worker's pod status patch to the watch seeing\n"+
		"the discovery script drop it (not ready) or list it again (ready); %d workers per size, one at a time,\n"+
		"%s\n", r.Samples, apart(r.Gap))
	w := table(out)
	fmt.Fprintln(w, "workers\tall listed\tchange\tn\tmedian\tp90\tmin\tmax\t")
	for _, s := range r.Discovery {
		fmt.Fprintf(w, "%d\t%.1f s\tnot ready\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t\n", s.Workers, s.StartupSeconds,
			s.NotReady.Samples, s.NotReady.MedianMs, s.NotReady.P90Ms, s.NotReady.MinMs, s.NotReady.MaxMs)
		fmt.Fprintf(w, "\t\tready\t%d\t%.0f\t%.0f\t%.0f\t%.0f\t\n",
			s.Ready.Samples, s.Ready.MedianMs, s.Ready.P90Ms, s.Ready.MinMs, s.Ready.MaxMs)
	}
	w.Flush()

	fmt.Fprintln(out, "\nAPI cost per change: the reconciler's /metrics before and after those changes, over their number\n"+
		"(rest_client_requests_total, trainfn_writes_total, process_cpu_seconds_total)")
	w = table(out)
	fmt.Fprintln(w, "workers\tchanges\trequests\tby method\twrites\tby kind\tCPU\t")
	for _, s := range r.Discovery {
		c := s.PerChange
		fmt.Fprintf(w, "%d\t%d\t%.2f\t%s\t%.2f\t%s\t%.1f ms\t\n", s.Workers, s.Changes,
			c.Requests, breakdown(c.RequestsBy), c.Writes, breakdown(c.WritesBy), c.CPUMs)
	}
	w.Flush()

	fmt.Fprintln(out, "\nBursts: 10% of a job's workers made not ready at once (concurrent status patches), then ready again;\n"+
		"what the reconciler did in all, until it settled; latency from the last patch answered")
	w = table(out)
	fmt.Fprintln(w, "workers\tpods\tburst\tscript versions\tdiscovery writes\twrites\tby kind\trequests\tlatency\t")
	for _, s := range r.Discovery {
		for i, b := range []struct {
			name string
			b    Burst
		}{{"not ready", s.BurstNotReady}, {"ready", s.BurstReady}} {
			workers := ""
			if i == 0 {
				workers = fmt.Sprint(s.Workers)
			}
			c := b.b.Counts
			fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%.0f\t%.0f\t%s\t%.0f\t%.0f ms\t\n", workers, b.b.Pods, b.name,
				b.b.ScriptVersions, c.DiscoveryWrites, c.Writes, breakdown(c.WritesBy), c.Requests, b.b.LatencyMs)
		}
	}
	w.Flush()

	m := r.Memory
	fmt.Fprintf(out, "\nMemory: a fresh reconciler's peak RSS (VmHWM) once synced and settled after one %d-worker job\n", m.Workers)
	w = table(out)
	fmt.Fprintln(w, "cluster\tpeak RSS\tRSS\tGo heap in use\t")
	fmt.Fprintf(w, "no unrelated pods\t%.1f MiB\t%.1f MiB\t%.1f MiB\t\n", mib(m.Baseline.PeakKiB), mib(m.Baseline.RSSKiB), mib(m.Baseline.HeapKiB))
	fmt.Fprintf(w, "%d unrelated pods in %d namespaces, %s\t%.1f MiB\t%.1f MiB\t%.1f MiB\t\n", m.UnrelatedPods, m.Namespaces,
		m.UnrelatedState, mib(m.Loaded.PeakKiB), mib(m.Loaded.RSSKiB), mib(m.Loaded.HeapKiB))
	fmt.Fprintf(w, "ratio\t%.2fx\t\t\t\n", m.Ratio)
	w.Flush()
	fmt.Fprintf(out, "(the %d unrelated pods took %.1f s to create)\n", m.UnrelatedPods, m.CreateSeconds)

	if previous == nil {
		fmt.Fprintf(out, "\nResults written to %s; the next run compares against them.\n", path)
		return
	}
	fmt.Fprintf(out, "\nAgainst the previous results in %s (%s, %s, %s, changes %s):\n",
		path, previous.Mode, previous.Commit, previous.Date.Format(time.DateTime), apart(previous.Gap))
	old := map[string]float64{}
	for _, f := range previous.figures() {
		old[f.name] = f.value
	}
	w = table(out)
	fmt.Fprintln(w, "figure\told\tnew\tnew/old\t")
	for _, f := range r.figures() {
		o, ok := old[f.name]
		if !ok {
			continue
		}
		ratio := "-"
		if o != 0 {
			ratio = fmt.Sprintf("%.2fx", f.value/o)
		}
		fmt.Fprintf(w, "%s\t%.4g\t%.4g\t%s\t\n", f.name, o, f.value, ratio)
	}
	w.Flush()
	fmt.Fprintf(out, "Results written to %s.\n", path)
}

// apart says how far apart one-at-a-time changes were; results from
// before the gap existed had none.
func apart(gap string) string {
	if gap == "" || gap == "0s" {
		return "back to back"
	}
	return gap + " apart"
}

func table(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// breakdown prints counts by label, largest first.
func breakdown(by map[string]float64) string {
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(a, b string) int {
		if by[a] != by[b] {
			if by[a] > by[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.3g", k, by[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
