package bench

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The reconciler's metrics the benchmark reads.
const (
	// requestsTotal counts every request of the reconciler's API clients,
	// by method and code: controller-runtime registers client-go's.
	requestsTotal = "rest_client_requests_total"
	// writesTotal and discoveryWrites are the reconciler's own: every
	// patch it sends, and those of a discovery script.
	writesTotal     = "trainfn_writes_total"
	discoveryWrites = "trainfn_discovery_writes_total"
	cpuSeconds      = "process_cpu_seconds_total"
)

// metrics are samples of Prometheus' text format by metric name.
type metrics map[string][]sample

type sample struct {
	labels map[string]string
	value  float64
}

// parseMetrics reads Prometheus' text exposition format, which is all the
// benchmark needs of it: names, labels and values.
func parseMetrics(r io.Reader) (metrics, error) {
	m := metrics{}
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		end := strings.IndexAny(line, "{ ")
		if end < 0 {
			return nil, fmt.Errorf("metrics: no value in %q", line)
		}
		name, rest := line[:end], line[end:]
		labels := map[string]string{}
		if rest[0] == '{' {
			var err error
			if labels, rest, err = parseLabels(rest[1:]); err != nil {
				return nil, fmt.Errorf("metrics: %q: %w", line, err)
			}
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return nil, fmt.Errorf("metrics: no value in %q", line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", line, err)
		}
		m[name] = append(m[name], sample{labels: labels, value: v})
	}
	return m, s.Err()
}

// parseLabels reads `a="x",b="y"}` and returns what follows the brace.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		key, rest, ok := strings.Cut(s, "=")
		if !ok || !strings.HasPrefix(rest, `"`) {
			return nil, "", fmt.Errorf("bad label at %q", s)
		}
		var value strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
				switch rest[i] {
				case 'n':
					value.WriteByte('\n')
				default:
					value.WriteByte(rest[i])
				}
				continue
			}
			value.WriteByte(rest[i])
		}
		if i >= len(rest) {
			return nil, "", fmt.Errorf("unterminated label value at %q", s)
		}
		labels[strings.TrimSpace(key)] = value.String()
		s = rest[i+1:]
	}
}

// sum adds a metric's samples whose labels have the given values.
func (m metrics) sum(name string, match ...string) float64 {
	total := 0.0
	for _, s := range m[name] {
		ok := true
		for i := 0; i+1 < len(match); i += 2 {
			ok = ok && s.labels[match[i]] == match[i+1]
		}
		if ok {
			total += s.value
		}
	}
	return total
}

// byLabel adds a metric's samples up by one label's value.
func (m metrics) byLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m[name] {
		out[s.labels[label]] += s.value
	}
	return out
}

// delta is what a counter grew by from before to after, by label value.
func delta(before, after metrics, name, label string) map[string]float64 {
	out := after.byLabel(name, label)
	for k, v := range before.byLabel(name, label) {
		out[k] -= v
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k)
		}
	}
	return out
}
