package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/trainfn/trainfn/test/scrape"
)

const exposition = `rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 12
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PATCH"} 40
trainfn_writes_total{kind="ConfigMap"} 20
trainfn_writes_total{kind="Pod"} 21
`

func TestPerChange(t *testing.T) {
	before, _ := scrape.Parse(strings.NewReader(exposition))
	after, _ := scrape.Parse(strings.NewReader(strings.NewReplacer(
		`method="PATCH"} 40`, `method="PATCH"} 60`,
		`kind="ConfigMap"} 20`, `kind="ConfigMap"} 30`,
		`kind="Pod"} 21`, `kind="Pod"} 31`,
	).Replace(exposition)))
	c := perChange(before, after, 10)
	if c.Requests != 2 || c.Writes != 2 || c.WritesBy["ConfigMap"] != 1 || c.RequestsBy["PATCH"] != 2 {
		t.Errorf("perChange = %+v", c)
	}
	if _, ok := c.RequestsBy["GET"]; ok {
		t.Error("a method that did not grow is reported")
	}
}

func TestProcMemory(t *testing.T) {
	peak, rss, err := procMemory(strings.NewReader("Name:\ttrainfn\nVmPeak:\t 1300000 kB\nVmHWM:\t   57432 kB\nVmRSS:\t   51200 kB\n"))
	if err != nil || peak != 57432 || rss != 51200 {
		t.Errorf("procMemory = %d, %d, %v", peak, rss, err)
	}
}

func TestHostsOf(t *testing.T) {
	hosts := hostsOf("#!/bin/sh\necho job-worker-0.job:1\necho job-worker-2.job:4\n")
	if len(hosts) != 2 || !hosts["job-worker-0"] || !hosts["job-worker-2"] {
		t.Errorf("hostsOf = %v", hosts)
	}
	if !listsAll(1)(hosts) || listsAll(2)(hosts) {
		t.Error("listsAll disagrees with the hosts")
	}
}

func TestLatency(t *testing.T) {
	var ds []time.Duration
	for i := 10; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	l := latency(ds)
	if l != (Latency{Samples: 10, MedianMs: 5, P90Ms: 9, MinMs: 1, MaxMs: 10}) {
		t.Errorf("latency = %+v", l)
	}
	if ds[0] != 10*time.Millisecond {
		t.Error("latency sorted its argument")
	}
}

func TestPrintResultsComparesFigures(t *testing.T) {
	old := &Results{Mode: "full", Discovery: []Size{{Workers: 10, NotReady: Latency{MedianMs: 100}}}, Memory: Memory{Ratio: 1}}
	cur := &Results{Mode: "full", Discovery: []Size{{Workers: 10, NotReady: Latency{MedianMs: 50}}, {Workers: 100}}, Memory: Memory{Ratio: 1.1}}
	var out bytes.Buffer
	printResults(&out, cur, old, "results.json")
	text := out.String()
	for _, want := range []string{"10 workers: not ready median (ms)", "0.50x", "memory: ratio", "1.10x"} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "100 workers: not ready median") {
		t.Errorf("a figure the previous run lacks is compared:\n%s", text)
	}
}
