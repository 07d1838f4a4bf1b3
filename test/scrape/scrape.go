// Package scrape reads the Prometheus metrics a process serves, with
// Prometheus' own parser, for tests and benchmarks that count what the
// process did.
package scrape

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Samples are a scrape's samples by metric name.
type Samples map[string][]Sample

// Sample is one series' value and labels.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Get scrapes url.
func Get(ctx context.Context, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return Parse(resp.Body)
}

// Parse reads Prometheus' text exposition format. Counters, gauges and
// untyped series give their value; histograms and summaries their count.
func Parse(r io.Reader) (Samples, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	out := Samples{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[name] = append(out[name], Sample{Labels: labels, Value: value(m)})
		}
	}
	return out, nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	}
	return m.GetUntyped().GetValue()
}

// Sum adds a metric's samples whose labels have the given values, given as
// name, value pairs.
func (s Samples) Sum(name string, match ...string) float64 {
	total := 0.0
	for _, sample := range s[name] {
		ok := true
		for i := 0; i+1 < len(match); i += 2 {
			ok = ok && sample.Labels[match[i]] == match[i+1]
		}
		if ok {
			total += sample.Value
		}
	}
	return total
}

// ByLabel adds a metric's samples up by one label's value.
func (s Samples) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, sample := range s[name] {
		out[sample.Labels[label]] += sample.Value
	}
	return out
}
