// Package pod edits a user's pod template into the one a rendered workload
// runs. It keeps what the user wrote, in the order written, and adds or sets
// only what running the job needs. Names the user already took are reported
// as errors rather than silently shadowed.
package pod

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// Template is a PodTemplateSpec being edited.
type Template struct {
	node *yaml.Node
	// path locates the template in the job spec, for errors.
	path *field.Path
}

// NewTemplate edits a copy of a PodTemplateSpec found at path.
func NewTemplate(template *yaml.RNode, path *field.Path) *Template {
	node := yaml.CopyYNode(template.YNode())
	blockStyle(node)
	return &Template{node: node, path: path}
}

// blockStyle writes mappings and lists of mappings in block style, so that
// what trainfn adds to them reads as block YAML too; lists of scalars, such
// as a command written [mpirun, -n, "2"], keep the style they were written in.
func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		n.Style &^= yaml.FlowStyle
		for i := 1; i < len(n.Content); i += 2 {
			blockStyle(n.Content[i])
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				n.Style &^= yaml.FlowStyle
			}
			blockStyle(c)
		}
	}
}

// Node is the edited template.
func (t *Template) Node() *yaml.Node { return t.node }

// AddLabels sets labels on the pod. With override, they replace the
// template's own values; without, the template's values are kept.
func (t *Template) AddLabels(labels map[string]string, override bool) {
	meta := lookup(t.node, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		// Metadata reads first in a template, as users write it.
		meta = &yaml.Node{Kind: yaml.MappingNode}
		t.node.Content = append([]*yaml.Node{ynode.String("metadata"), meta}, t.node.Content...)
	}
	target := ensureMap(meta, "labels")
	if !override {
		labels = maps.Clone(labels)
		for i := 0; i+1 < len(target.Content); i += 2 {
			delete(labels, target.Content[i].Value)
		}
	}
	mergeStringMap(target, labels)
}

// Set sets a field of the pod spec, replacing the template's value.
func (t *Template) Set(name string, value *yaml.Node) {
	setField(t.spec(), name, value)
}

// SetDefault sets a field of the pod spec the template leaves unset.
func (t *Template) SetDefault(name string, value *yaml.Node) {
	if lookup(t.spec(), name) == nil {
		setField(t.spec(), name, value)
	}
}

// Get returns a field of the pod spec, or nil.
func (t *Template) Get(name string) *yaml.Node { return lookup(t.spec(), name) }

// Main is the pod's first container, the one the job's work runs in.
func (t *Template) Main() *Container {
	containers := lookup(t.spec(), "containers")
	return &Container{node: containers.Content[0], path: t.specPath().Child("containers").Index(0)}
}

// AddVolume appends a volume, unless the template already has one so named.
func (t *Template) AddVolume(volume *yaml.Node) *field.Error {
	return t.appendNamed("volumes", volume, "a volume")
}

// AddInitContainer appends an init container, to run after the template's own.
func (t *Template) AddInitContainer(c *yaml.Node) *field.Error {
	if err := t.unusedContainerName(c); err != nil {
		return err
	}
	return t.appendNamed("initContainers", c, "an init container")
}

// RunsAsRoot tells whether the main container runs as root, as far as the
// template says: its runAsUser, else the pod's; ok is false when neither is
// set and only the image knows.
func (t *Template) RunsAsRoot() (root, ok bool) {
	for _, sc := range []*yaml.Node{lookup(t.Main().node, "securityContext"), lookup(t.spec(), "securityContext")} {
		if user := lookup(sc, "runAsUser"); user != nil {
			return user.Value == "0", true
		}
		if nonRoot := lookup(sc, "runAsNonRoot"); nonRoot != nil && nonRoot.Value == "true" {
			return false, true
		}
	}
	return false, false
}

func (t *Template) spec() *yaml.Node { return ensureMap(t.node, "spec") }

func (t *Template) specPath() *field.Path { return t.path.Child("spec") }

func (t *Template) appendNamed(list string, item *yaml.Node, what string) *field.Error {
	seq := ensureSeq(t.spec(), list)
	name := lookup(item, "name").Value
	for i, existing := range seq.Content {
		if n := lookup(existing, "name"); n != nil && n.Value == name {
			return duplicate(t.specPath().Child(list).Index(i).Child("name"), name,
				"trainfn adds "+what+" of this name")
		}
	}
	seq.Content = append(seq.Content, item)
	return nil
}

func (t *Template) unusedContainerName(c *yaml.Node) *field.Error {
	name := lookup(c, "name").Value
	for i, existing := range lookup(t.spec(), "containers").Content {
		if n := lookup(existing, "name"); n != nil && n.Value == name {
			return duplicate(t.specPath().Child("containers").Index(i).Child("name"), name,
				"trainfn adds an init container of this name")
		}
	}
	return nil
}

// Container is a container of a template being edited.
type Container struct {
	node *yaml.Node
	path *field.Path
}

// Get returns a field of the container, or nil.
func (c *Container) Get(name string) *yaml.Node { return lookup(c.node, name) }

// Set sets a field of the container.
func (c *Container) Set(name string, value *yaml.Node) { setField(c.node, name, value) }

// AddEnv appends a variable the container does not set itself: a value the
// user wrote wins over trainfn's.
func (c *Container) AddEnv(name, value string) {
	env := ensureSeq(c.node, "env")
	for _, e := range env.Content {
		if n := lookup(e, "name"); n != nil && n.Value == name {
			return
		}
	}
	env.Content = append(env.Content, ynode.Map("name", name, "value", value))
}

// AddVolumeMount mounts a volume, unless the container already mounts
// something at that path.
func (c *Container) AddVolumeMount(volume, path string, readOnly bool) *field.Error {
	mounts := ensureSeq(c.node, "volumeMounts")
	for i, m := range mounts.Content {
		if p := lookup(m, "mountPath"); p != nil && p.Value == path {
			return duplicate(c.path.Child("volumeMounts").Index(i).Child("mountPath"), path,
				"trainfn mounts the "+volume+" volume there")
		}
	}
	mount := ynode.Map("name", volume, "mountPath", path)
	if readOnly {
		mount.Content = append(mount.Content, ynode.String("readOnly"), ynode.Of(true))
	}
	mounts.Content = append(mounts.Content, mount)
	return nil
}

// Node is the container's node, for copying.
func (c *Container) Node() *yaml.Node { return c.node }

// mergeStringMap sets every entry of m on a mapping of strings, in key order
// for entries it adds.
func mergeStringMap(mapping *yaml.Node, m map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		setField(mapping, k, ynode.String(m[k]))
	}
}

func duplicate(path *field.Path, value, why string) *field.Error {
	return &field.Error{Type: field.ErrorTypeDuplicate, Field: path.String(), BadValue: value, Detail: why}
}

func lookup(m *yaml.Node, name string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i+1]
		}
	}
	return nil
}

func setField(m *yaml.Node, name string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, ynode.String(name), value)
}

func ensureMap(m *yaml.Node, name string) *yaml.Node {
	if v := lookup(m, name); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	setField(m, name, v)
	return v
}

func ensureSeq(m *yaml.Node, name string) *yaml.Node {
	if v := lookup(m, name); v != nil && v.Kind == yaml.SequenceNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.SequenceNode}
	setField(m, name, v)
	return v
}
