package schemas

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"

	"cuelang.org/go/cue"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Most repositories repeat one job template many times over, the jobs
// differing only in their names, and in the annotations an orchestrator
// gives each item it passes a KRM function (kyaml's internal annotations:
// its index, its file). The schema's verdict and defaults for such a job
// are those of its template, but for the rules on those fields: the
// name's bound the names derived from it and so depend on the spec. A
// Validator therefore remembers the templates it has accepted more than
// once, and a job of a known template has only its own fields checked, by
// the schema's constraints on the template's metadata. Fields those
// refuse are validated in full, so every problem is reported exactly as
// it would be without the cache.
//
// A template is recorded on its second acceptance, not its first: a
// stream of jobs that share nothing pays no more than a digest each.
const (
	// maxSeen bounds the digests of templates accepted once.
	maxSeen = 4096
	// maxKnown bounds the templates kept, each with two evaluations of
	// the document alive: its own and one without its own fields.
	maxKnown = 64
)

// template is a job template accepted more than once.
type template struct {
	// spec is its spec, the schema's defaults filled in.
	spec cue.Value
	// name and annotations are the schema's constraints on the job's own
	// fields, evaluated for the template without them: checking the
	// whole metadata struct would cost a quarter of a full validation.
	name, annotations cue.Value
}

// templates are what a Validator remembers of the templates it accepted.
type templates struct {
	seen  map[templateKey]struct{}
	known map[templateKey]*template
	// hits counts the documents accepted by their own fields alone.
	hits int
}

// templateKey is a digest of a schema and of a document without its own
// fields.
type templateKey [sha256.Size]byte

// ownFields are the fields of a job's metadata its template leaves out.
type ownFields struct {
	Name        string
	Annotations map[string]string
}

// lookup is the known template of key, if its metadata accepts the job's
// own fields.
func (t *templates) lookup(ctx *cue.Context, key templateKey, own ownFields) (*template, bool) {
	known := t.known[key]
	if known == nil || known.name.Unify(ctx.Encode(own.Name)).Validate(cue.Concrete(true)) != nil {
		return nil, false
	}
	if len(own.Annotations) > 0 && (!known.annotations.Exists() || known.annotations.Unify(ctx.Encode(own.Annotations)).Validate(cue.Concrete(true)) != nil) {
		return nil, false
	}
	t.hits++
	return known, true
}

// accepted records that a document of the template key was accepted, with
// its defaulted spec; unowned evaluates the document without its own
// fields, and is called only when the template is seen a second time.
func (t *templates) accepted(key templateKey, spec cue.Value, unowned func() cue.Value) {
	if _, again := t.seen[key]; !again {
		if t.seen == nil || len(t.seen) >= maxSeen {
			t.seen = map[templateKey]struct{}{}
		}
		t.seen[key] = struct{}{}
		return
	}
	metadata := unowned().LookupPath(cue.ParsePath("metadata"))
	known := &template{spec: spec,
		name:        metadata.LookupPath(cue.ParsePath("name")),
		annotations: metadata.LookupPath(cue.ParsePath("annotations"))}
	if !known.name.Exists() {
		return
	}
	if t.known == nil || len(t.known) >= maxKnown {
		t.known = map[templateKey]*template{}
	}
	t.known[key] = known
}

// keyOf digests a document, as decoding reads it, without its own fields,
// which it returns. ok is false for a document a template cannot stand
// for: one whose own fields are not plain strings, or that has anchors or
// aliases.
func keyOf(s Schema, doc *yaml.Node) (key templateKey, own ownFields, ok bool) {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	skip, own, ok := ownFieldsOf(doc)
	if !ok {
		return key, own, false
	}
	d := digest{h: sha256.New(), skip: skip}
	d.text(s.Package)
	d.text(s.Definition)
	d.text(s.Source)
	if !d.node(doc) {
		return key, own, false
	}
	d.h.Sum(key[:0])
	return key, own, true
}

// ownFieldsOf finds a job's own fields, and the nodes of their values;
// false when a key is given twice, which only a full validation reports.
func ownFieldsOf(doc *yaml.Node) (map[*yaml.Node]bool, ownFields, bool) {
	if doc.Kind != yaml.MappingNode {
		return nil, ownFields{}, false
	}
	field := yaml.NewRNode(doc).Field("metadata")
	if field == nil || field.Value.YNode().Kind != yaml.MappingNode {
		return nil, ownFields{}, false
	}
	meta := field.Value.YNode()
	var own ownFields
	skip := map[*yaml.Node]bool{}
	internal := kioutil.GetInternalAnnotations(yaml.NewRNode(doc))
	names, annotations := 0, 0
	for i := 0; i+1 < len(meta.Content); i += 2 {
		key, value := meta.Content[i], meta.Content[i+1]
		switch key.Value {
		case "name":
			if !plainString(value) {
				return nil, own, false
			}
			own.Name = value.Value
			skip[value] = true
			names++
		case "annotations":
			annotations++
			if value.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(value.Content); j += 2 {
				k, v := value.Content[j], value.Content[j+1]
				if _, ok := internal[k.Value]; !ok {
					continue
				}
				if _, twice := own.Annotations[k.Value]; twice || !plainString(v) {
					return nil, own, false
				}
				if own.Annotations == nil {
					own.Annotations = map[string]string{}
				}
				own.Annotations[k.Value] = v.Value
				skip[v] = true
			}
		}
	}
	return skip, own, names == 1 && annotations <= 1
}

func plainString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == yaml.NodeTagString
}

// withoutOwnFields is a decoded document without the job's own fields.
func withoutOwnFields(plain any, own ownFields) any {
	doc, _ := plain.(map[string]any)
	meta, _ := doc["metadata"].(map[string]any)
	doc, meta = maps.Clone(doc), maps.Clone(meta)
	delete(meta, "name")
	if annotations, ok := meta["annotations"].(map[string]any); ok && len(own.Annotations) > 0 {
		annotations = maps.Clone(annotations)
		for k := range own.Annotations {
			delete(annotations, k)
		}
		meta["annotations"] = annotations
	}
	doc["metadata"] = meta
	return doc
}

// digest writes nodes into a hash by what decoding reads of them: kind,
// resolved tag and value, but not style, comments or positions.
type digest struct {
	h hash.Hash
	// skip are the nodes written as a mark of their own, whatever they hold.
	skip map[*yaml.Node]bool
}

func (d digest) text(s string) {
	d.number(len(s))
	d.h.Write([]byte(s))
}

func (d digest) number(n int) {
	var b [binary.MaxVarintLen64]byte
	d.h.Write(b[:binary.PutUvarint(b[:], uint64(n))])
}

// node digests n; false when n holds what a digest cannot stand for.
func (d digest) node(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return false
	}
	d.h.Write([]byte{byte(n.Kind)})
	if d.skip[n] {
		return true
	}
	d.text(n.ShortTag())
	d.text(n.Value)
	d.number(len(n.Content))
	for _, c := range n.Content {
		if !d.node(c) {
			return false
		}
	}
	return true
}
