package node

import (
	"bytes"
	"errors"
	"io"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// CPU is what every container asks of the node's CPU once Fit has run: the
// node has this machine's cores (two, on the machines the suite runs on),
// and the examples ask for a core a pod.
const CPU = "50m"

// Fit reads a YAML stream, sets the CPU request of every container that
// names a CPU figure to CPU, lets edit change each object if given, and
// writes the stream again. A container's CPU limit stays as written: the
// requests make the job fit the node, as a scheduler sees it, and each
// container may still use what its manifest allows, as it would on a
// cluster. (Limited to 50m as well, the containers ran throttled to a
// twentieth of a core: an SSH session took seconds, and pi four times as
// long as it does.) Nothing but the CPU requests, and what edit changes,
// differs.
func Fit(stream []byte, edit func(obj map[string]any)) ([]byte, error) {
	var out bytes.Buffer
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var obj map[string]any
		err := d.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		fitRequests(obj)
		if edit != nil {
			edit(obj)
		}
		data, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
}

// fitRequests sets to CPU the CPU request of every resources in v that
// names a CPU request or limit. A limit alone would be the request too:
// the request is set beside it. Resources with no CPU (a claim's storage)
// are left as they are.
func fitRequests(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if r, ok := child.(map[string]any); ok && k == "resources" && namesCPU(r) {
				requests, _ := r["requests"].(map[string]any)
				if requests == nil {
					requests = map[string]any{}
					r["requests"] = requests
				}
				requests["cpu"] = CPU
				continue
			}
			fitRequests(child)
		}
	case []any:
		for _, child := range v {
			fitRequests(child)
		}
	}
}

// namesCPU says whether a container's resources ask for or limit CPU.
func namesCPU(resources map[string]any) bool {
	for _, key := range []string{"requests", "limits"} {
		if list, ok := resources[key].(map[string]any); ok {
			if _, ok := list["cpu"]; ok {
				return true
			}
		}
	}
	return false
}
