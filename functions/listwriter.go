package functions

import (
	"bytes"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// writeList writes a ResourceList (or v1 List) exactly as kyaml's
// kio.ByteWriter wraps items, byte for byte, but encodes one item at a
// time. yaml.v3's emitter keeps every event of a document until the
// document ends, and a list is one document: encoded whole, as kyaml
// encodes it, a list of 5,000 jobs' objects held gigabytes of events, and
// kyaml first copies every item besides.
//
// Each item is encoded as the only item of a list of its own, and its
// lines are those the whole list would have: the emitter reaches an item
// in the same state either way, at the same indentation, and keeps
// nothing from one item to the next that it writes.
func writeList(w io.Writer, apiVersion, kind string, items []*yaml.Node, functionConfig, results *yaml.Node) error {
	key := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	header := []*yaml.Node{key("apiVersion"), key(apiVersion), key("kind"), key(kind)}
	if len(items) == 0 {
		header = append(header, key("items"), &yaml.Node{Kind: yaml.SequenceNode})
	}
	if err := encodeMapping(w, header); err != nil {
		return err
	}
	if len(items) > 0 {
		if _, err := io.WriteString(w, "items:\n"); err != nil {
			return err
		}
		prefix := []byte("items:\n")
		var b bytes.Buffer
		for _, item := range items {
			b.Reset()
			if err := encodeMapping(&b, []*yaml.Node{key("items"), {Kind: yaml.SequenceNode, Content: []*yaml.Node{item}}}); err != nil {
				return err
			}
			if _, err := w.Write(bytes.TrimPrefix(b.Bytes(), prefix)); err != nil {
				return err
			}
		}
	}
	var trailer []*yaml.Node
	if functionConfig != nil {
		trailer = append(trailer, key("functionConfig"), functionConfig)
	}
	if results != nil {
		trailer = append(trailer, key("results"), results)
	}
	if len(trailer) == 0 {
		return nil
	}
	return encodeMapping(w, trailer)
}

// encodeMapping writes a mapping of the given keys and values as a
// document, with kyaml's encoder settings.
func encodeMapping(w io.Writer, content []*yaml.Node) error {
	encoder := yaml.NewEncoder(w)
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: content}}}
	if err := encoder.Encode(doc); err != nil {
		return err
	}
	return encoder.Close()
}
