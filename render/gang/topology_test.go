package gang

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/workload"
)

// withAnnotations is a job of 4 workers whose pod template carries the
// annotations, given as YAML flow mapping entries.
func withAnnotations(t *testing.T, annotations string) []Member {
	return []Member{member(t, 4, fmt.Sprintf(`{metadata: {annotations: {%s}}, spec: {containers: [{name: w, image: i}]}}`, annotations))}
}

func TestTopologyRequestsKueueTakes(t *testing.T) {
	for _, annotations := range []string{
		`kueue.x-k8s.io/podset-required-topology: example.com/rack`,
		`kueue.x-k8s.io/podset-preferred-topology: example.com/block, kueue.x-k8s.io/podset-group-name: training`,
		`kueue.x-k8s.io/podset-unconstrained-topology: "true"`,
		`kueue.x-k8s.io/podset-slice-required-topology: example.com/rack, kueue.x-k8s.io/podset-slice-size: "2"`,
		`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology": "example.com/block", "size": 4}, {"topology": "example.com/rack", "size": 2}]'`,
	} {
		_, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: withAnnotations(t, annotations)}, options.Gang{Scheduler: options.Kueue, Queue: "q"})
		assert.Empty(t, errs, annotations)
	}
}

func TestTopologyRequestsKueueRefuses(t *testing.T) {
	for _, tt := range []struct{ annotations, field, says string }{
		{`kueue.x-k8s.io/podset-required-topology: example.com/rack, kueue.x-k8s.io/podset-preferred-topology: example.com/block`,
			"kueue.x-k8s.io/podset-required-topology", "must not contain more than one topology annotation"},
		{`kueue.x-k8s.io/podset-required-topology: "rack/of/racks"`, "kueue.x-k8s.io/podset-required-topology", "a valid label key"},
		{`kueue.x-k8s.io/podset-unconstrained-topology: "maybe"`, "kueue.x-k8s.io/podset-unconstrained-topology", "must be a boolean value"},
		{`kueue.x-k8s.io/podset-slice-size: "2"`, "kueue.x-k8s.io/podset-slice-size", "may not be set when 'kueue.x-k8s.io/podset-slice-required-topology' is not specified"},
		{`kueue.x-k8s.io/podset-slice-required-topology: example.com/rack`, "kueue.x-k8s.io/podset-slice-size", "must be set when 'kueue.x-k8s.io/podset-slice-required-topology' is specified"},
		{`kueue.x-k8s.io/podset-slice-required-topology: example.com/rack, kueue.x-k8s.io/podset-slice-size: "two"`, "kueue.x-k8s.io/podset-slice-size", "must be a numeric value"},
		{`kueue.x-k8s.io/podset-slice-required-topology: example.com/rack, kueue.x-k8s.io/podset-slice-size: "0"`, "kueue.x-k8s.io/podset-slice-size", "must be greater than or equal to 1"},
		{`kueue.x-k8s.io/podset-slice-required-topology: example.com/rack, kueue.x-k8s.io/podset-slice-size: "8"`, "kueue.x-k8s.io/podset-slice-size", "must not be greater than pod set count 4"},
		{`kueue.x-k8s.io/podset-group-name: "7", kueue.x-k8s.io/podset-required-topology: example.com/rack`, "kueue.x-k8s.io/podset-group-name", "must not be a number"},
		{`kueue.x-k8s.io/podset-group-name: training`, "kueue.x-k8s.io/podset-group-name", "may not be set when neither"},
		{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[]'`, "kueue.x-k8s.io/podset-slice-required-topology-constraints", "between 1 and 3 entries"},
		{`kueue.x-k8s.io/podset-slice-required-topology-constraints: '[{"topology": "example.com/block", "size": 4}, {"topology": "example.com/rack", "size": 3}]'`,
			"kueue.x-k8s.io/podset-slice-required-topology-constraints", "must evenly divide the parent layer size 4"},
	} {
		_, _, errs := Render(Gang{Owner: workload.Owner{Name: "pi"}, Members: withAnnotations(t, tt.annotations)}, options.Gang{})
		require.NotEmpty(t, errs, "%s: refused whatever the scheduler, as Kueue's webhooks refuse it", tt.annotations)
		assert.Contains(t, errs[0].Field, tt.field, tt.annotations)
		assert.Contains(t, errs[0].Error(), tt.says, tt.annotations)
	}
}
