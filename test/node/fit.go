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
	return fitWith(stream, edit, fitCPU)
}

func fitWith(stream []byte, edit func(obj map[string]any), fit fitting) ([]byte, error) {
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
		fit(obj, "")
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

// fitting changes the CPU of every container in an object.
type fitting func(v any, key string)

// withLimits sets the CPU request of every container in v to CPU, and
// keeps its limit.
func withLimits(v any, key string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if k == "resources" {
				if r, ok := child.(map[string]any); ok {
					requests, _ := r["requests"].(map[string]any)
					if requests == nil {
						requests = map[string]any{}
						r["requests"] = requests
					}
					requests["cpu"] = CPU
					continue
				}
			}
			withLimits(child, k)
		}
	case []any:
		for _, child := range v {
			withLimits(child, key)
		}
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

// FitRequests is Fit for a run that gives each container the CPU its
// manifest allows: every CPU request is set to CPU, so that the job fits
// the node's cores, and every limit is kept as written.
func FitRequests(stream []byte) ([]byte, error) {
	return fitWith(stream, nil, withLimits)
}
