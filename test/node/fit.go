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

// Fit reads a YAML stream, sets every CPU request and limit in it to CPU,
// lets edit change each object if given, and writes the stream again.
// Nothing but the CPU, and what edit changes, differs.
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
		fitCPU(obj, "")
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

// fitCPU sets every CPU request and limit in v to CPU.
func fitCPU(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if k == "cpu" && (key == "requests" || key == "limits") {
				v[k] = CPU
				continue
			}
			fitCPU(child, k)
		}
	case []any:
		for _, child := range v {
			fitCPU(child, key)
		}
	}
}
