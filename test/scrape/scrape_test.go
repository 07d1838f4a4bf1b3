package scrape

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const exposition = `# HELP rest_client_requests_total Number of HTTP requests.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",method="GET"} 12
rest_client_requests_total{code="200",method="PATCH"} 40
# TYPE trainfn_discovery_latency_seconds histogram
trainfn_discovery_latency_seconds_bucket{le="1"} 2
trainfn_discovery_latency_seconds_bucket{le="+Inf"} 3
trainfn_discovery_latency_seconds_sum 1.5
trainfn_discovery_latency_seconds_count 3
weird{a="x\"}y",b="\\"} 1.5e+00
process_cpu_seconds_total 3.25
`

func TestParse(t *testing.T) {
	s, err := Parse(strings.NewReader(exposition))
	require.NoError(t, err)
	require.Equal(t, 52.0, s.Sum("rest_client_requests_total"))
	require.Equal(t, 40.0, s.Sum("rest_client_requests_total", "method", "PATCH"))
	require.Equal(t, 3.0, s.Sum("trainfn_discovery_latency_seconds"), "a histogram counts its observations")
	require.Equal(t, 1.5, s.Sum("weird", "a", `x"}y`, "b", `\`))
	require.Equal(t, 3.25, s.Sum("process_cpu_seconds_total"))
	require.Equal(t, 0.0, s.Sum("missing"))
	require.Equal(t, map[string]float64{"GET": 12, "PATCH": 40}, s.ByLabel("rest_client_requests_total", "method"))

	_, err = Parse(strings.NewReader(`bad{a="x} 1` + "\n"))
	require.Error(t, err, "an unterminated label value parses")
}
