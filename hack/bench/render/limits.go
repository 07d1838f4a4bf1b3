package main

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	// maxObjectBytes is etcd's default --max-request-bytes, which bounds
	// any object the API server stores.
	maxObjectBytes = 1572864
	// maxConfigMapData is what the API server's validation allows in a
	// ConfigMap's (or Secret's) data and binaryData together.
	maxConfigMapData = 1 << 20
)

// Largest is the output object closest to the API server's limits.
type Largest struct {
	Object    string `json:"object"`
	JSONBytes int    `json:"jsonBytes"`
	DataBytes int    `json:"dataBytes,omitempty"`
}

// checkLimits reads a ResourceList trainfn wrote and finds its largest
// object, failing with the first that the API server would refuse.
func checkLimits(resourceList []byte) (Largest, error) {
	items, err := (&kio.ByteReader{Reader: bytes.NewReader(resourceList), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return Largest{}, err
	}
	var largest Largest
	for _, item := range items {
		data, err := item.MarshalJSON()
		if err != nil {
			return Largest{}, err
		}
		name := item.GetKind() + " " + item.GetName()
		stored := dataBytes(item)
		if len(data) > largest.JSONBytes {
			largest = Largest{Object: name, JSONBytes: len(data), DataBytes: stored}
		}
		if len(data) > maxObjectBytes {
			return largest, fmt.Errorf("%s is %d bytes as JSON, over etcd's default limit of %d", name, len(data), maxObjectBytes)
		}
		if stored > maxConfigMapData {
			return largest, fmt.Errorf("%s holds %d bytes of data, over the API server's limit of %d", name, stored, maxConfigMapData)
		}
	}
	return largest, nil
}

// dataBytes counts what a ConfigMap or Secret stores under data and
// binaryData: keys and base64 text included, so a little more than the API
// server's validation counts.
func dataBytes(n *yaml.RNode) int {
	if k := n.GetKind(); k != "ConfigMap" && k != "Secret" {
		return 0
	}
	total := 0
	for _, field := range []string{"data", "binaryData", "stringData"} {
		m := n.Field(field)
		if m == nil {
			continue
		}
		_ = m.Value.VisitFields(func(f *yaml.MapNode) error {
			total += len(f.Key.YNode().Value) + len(f.Value.YNode().Value)
			return nil
		})
	}
	return total
}
