package pod

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The API server's own words for each rule: what it says when it refuses
// the Job or StatefulSet that carries the template.
func TestResourceErrors(t *testing.T) {
	for name, tt := range map[string]struct {
		spec string
		want []string
	}{
		"a GPU limit alone is requested as limited": {`{containers: [{name: c, resources: {limits: {nvidia.com/gpu: 8}}}]}`, nil},
		"equal request and limit":                   {`{containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}, requests: {nvidia.com/gpu: 8}}}]}`, nil},
		"cpu may be overcommitted":                  {`{containers: [{name: c, resources: {limits: {cpu: 2}, requests: {cpu: 500m, memory: 1Gi}}}]}`, nil},
		"a GPU request without a limit": {`{containers: [{name: c, resources: {requests: {nvidia.com/gpu: 8}}}]}`,
			[]string{"t.spec.containers[0].resources.limits[nvidia.com/gpu]: Required value: Limit must be set for non overcommitable resources"}},
		"a GPU request other than its limit": {`{containers: [{name: c, resources: {limits: {nvidia.com/gpu: 4}, requests: {nvidia.com/gpu: 8}}}]}`,
			[]string{`t.spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "8": must be equal to nvidia.com/gpu limit of 4`}},
		"a request over its limit": {`{initContainers: [{name: i, resources: {limits: {memory: 1Gi}, requests: {memory: 2Gi}}}]}`,
			[]string{`t.spec.initContainers[0].resources.requests[memory]: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`}},
		"a name that is no resource": {`{containers: [{name: c, resources: {limits: {gpu: 1}}}]}`,
			[]string{`t.spec.containers[0].resources.limits[gpu]: Invalid value: "gpu": must be a standard resource for containers`}},
		"a negative quantity": {`{containers: [{name: c, resources: {requests: {cpu: "-1"}}}]}`,
			[]string{`t.spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`}},
		"huge pages alone": {`{containers: [{name: c, resources: {limits: {hugepages-2Mi: 1Gi}}}]}`,
			[]string{`t.spec.containers[0].resources: Forbidden: HugePages require cpu or memory`}},
		"a GPU for the whole pod": {`{resources: {limits: {nvidia.com/gpu: 8}}, containers: [{name: c}]}`,
			[]string{`t.spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu": supported values: "cpu", "hugepages-", "memory"`}},
		"the pod asks for less than its containers": {`{resources: {requests: {cpu: 1}}, containers: [{name: a, resources: {requests: {cpu: 1}}}, {name: b, resources: {requests: {cpu: 500m}}}]}`,
			[]string{`t.spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container requests of 1500m`}},
		"an init container asks for more than the others together": {`{resources: {requests: {memory: 1Gi}}, initContainers: [{name: i, resources: {requests: {memory: 2Gi}}}], containers: [{name: c}]}`,
			[]string{`t.spec.resources.requests[memory]: Invalid value: "1Gi": must be greater than or equal to aggregate container requests of 2Gi`}},
	} {
		t.Run(name, func(t *testing.T) {
			tmpl := NewTemplate(yaml.MustParse(`{spec: `+tt.spec+`}`), field.NewPath("t"))
			var got []string
			for _, err := range tmpl.ResourceErrors() {
				got = append(got, err.Error())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
