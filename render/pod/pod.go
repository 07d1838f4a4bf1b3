// Package pod edits a user's pod template into the one a rendered workload
// runs. It keeps what the user wrote, in the order written, and adds or sets
// only what running the job needs. Names the user already took are reported
// as errors rather than silently shadowed.
package pod

import (
	"maps"
	"path"
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

// Copy is an independent copy of the template being edited.
func (t *Template) Copy() *Template {
	return &Template{node: yaml.CopyYNode(t.node), path: t.path}
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

// Path locates a field of the pod spec in the job spec.
func (t *Template) Path(name string) *field.Path { return t.path.Child("spec", name) }

// AddLabels sets labels on the pod. With override, they replace the
// template's own values; without, the template's values are kept.
func (t *Template) AddLabels(labels map[string]string, override bool) {
	t.addMetadata("labels", labels, override)
}

// AddAnnotations sets annotations on the pod, as AddLabels sets labels.
func (t *Template) AddAnnotations(annotations map[string]string, override bool) {
	t.addMetadata("annotations", annotations, override)
}

func (t *Template) addMetadata(name string, values map[string]string, override bool) {
	meta := ynode.Get(t.node, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		// Metadata reads first in a template, as users write it.
		meta = &yaml.Node{Kind: yaml.MappingNode}
		t.node.Content = append([]*yaml.Node{ynode.String("metadata"), meta}, t.node.Content...)
	}
	target := ynode.EnsureMap(meta, name)
	if !override {
		values = maps.Clone(values)
		for i := 0; i+1 < len(target.Content); i += 2 {
			delete(values, target.Content[i].Value)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(values)) {
		ynode.Set(target, k, ynode.String(values[k]))
	}
}

// Annotations are the pod's annotations, as the template sets them.
func (t *Template) Annotations() map[string]string {
	out := map[string]string{}
	annotations := ynode.Get(ynode.Get(t.node, "metadata"), "annotations")
	if annotations == nil || annotations.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(annotations.Content); i += 2 {
		out[annotations.Content[i].Value] = annotations.Content[i+1].Value
	}
	return out
}

// AnnotationPath locates one of the pod's annotations in the job spec.
func (t *Template) AnnotationPath(key string) *field.Path {
	return t.path.Child("metadata", "annotations").Key(key)
}

// Set sets a field of the pod spec and returns the value it replaced, if any.
func (t *Template) Set(name string, value *yaml.Node) (replaced *yaml.Node) {
	replaced = ynode.Get(t.spec(), name)
	ynode.Set(t.spec(), name, value)
	return replaced
}

// SetDefault sets a field of the pod spec the template leaves unset.
func (t *Template) SetDefault(name string, value *yaml.Node) {
	if ynode.Get(t.spec(), name) == nil {
		ynode.Set(t.spec(), name, value)
	}
}

// Remove drops a field of the pod spec and returns its value, if any.
func (t *Template) Remove(name string) *yaml.Node {
	spec := t.spec()
	for i := 0; i+1 < len(spec.Content); i += 2 {
		if spec.Content[i].Value == name {
			value := spec.Content[i+1]
			spec.Content = slices.Delete(spec.Content, i, i+2)
			return value
		}
	}
	return nil
}

// String reads a scalar field of the pod spec; "" when it is unset.
func (t *Template) String(name string) string {
	if n := ynode.Get(t.spec(), name); n != nil {
		return n.Value
	}
	return ""
}

// Bool reads a boolean field of the pod spec, however YAML spells it.
func (t *Template) Bool(name string) bool {
	var b bool
	n := ynode.Get(t.spec(), name)
	return n != nil && n.Decode(&b) == nil && b
}

// Main is the pod's first container, the one the job's work runs in.
func (t *Template) Main() *Container {
	containers := ynode.Get(t.spec(), "containers")
	return &Container{node: containers.Content[0], path: t.Path("containers").Index(0)}
}

// Containers are the pod's containers, init containers aside.
func (t *Template) Containers() []*Container { return t.containersOf("containers") }

// InitContainers are the pod's init containers.
func (t *Template) InitContainers() []*Container { return t.containersOf("initContainers") }

// containersOf are the containers of one of the pod's lists.
func (t *Template) containersOf(list string) []*Container {
	containers := ynode.Get(t.spec(), list)
	if containers == nil {
		return nil
	}
	out := make([]*Container, len(containers.Content))
	for i, c := range containers.Content {
		out[i] = &Container{node: c, path: t.Path(list).Index(i)}
	}
	return out
}

// Container is the container so named, or nil.
func (t *Template) Container(name string) *Container {
	for _, c := range t.Containers() {
		if n := c.Get("name"); n != nil && n.Value == name {
			return c
		}
	}
	return nil
}

// AddVolume appends a volume, unless the template already has one so named.
func (t *Template) AddVolume(volume *yaml.Node) *field.Error {
	return t.appendNamed("volumes", volume, "a volume")
}

// AddInitContainer appends an init container, to run after the template's
// own, unless a container of the pod already has its name.
func (t *Template) AddInitContainer(c *yaml.Node) *field.Error {
	name := ynode.Get(c, "name").Value
	if i := indexOfName(ynode.Get(t.spec(), "containers"), name); i >= 0 {
		return duplicate(t.Path("containers").Index(i).Child("name"), name, "trainfn adds an init container of this name")
	}
	return t.appendNamed("initContainers", c, "an init container")
}

// RunsAsRoot tells whether the main container runs as root, as far as the
// template says: its securityContext, else the pod's; ok is false when
// neither says and only the image knows.
func (t *Template) RunsAsRoot() (root, ok bool) {
	for _, sc := range []*yaml.Node{ynode.Get(t.Main().node, "securityContext"), ynode.Get(t.spec(), "securityContext")} {
		var user int64
		if n := ynode.Get(sc, "runAsUser"); n != nil && n.Decode(&user) == nil {
			return user == 0, true
		}
		var nonRoot bool
		if n := ynode.Get(sc, "runAsNonRoot"); n != nil && n.Decode(&nonRoot) == nil && nonRoot {
			return false, true
		}
	}
	return false, false
}

func (t *Template) spec() *yaml.Node { return ynode.EnsureMap(t.node, "spec") }

func (t *Template) appendNamed(list string, item *yaml.Node, what string) *field.Error {
	seq := ynode.EnsureSeq(t.spec(), list)
	name := ynode.Get(item, "name").Value
	if i := indexOfName(seq, name); i >= 0 {
		return duplicate(t.Path(list).Index(i).Child("name"), name, "trainfn adds "+what+" of this name")
	}
	seq.Content = append(seq.Content, item)
	return nil
}

// Container is a container of a template being edited.
type Container struct {
	node *yaml.Node
	path *field.Path
}

// ContainerOf edits a container trainfn builds itself; it has no place in
// the user's spec, so errors about it carry no field path.
func ContainerOf(node *yaml.Node) *Container { return &Container{node: node} }

// Path locates the container in the job spec; nil for one trainfn built.
func (c *Container) Path() *field.Path { return c.path }

// Node is the container's YAML.
func (c *Container) Node() *yaml.Node { return c.node }

// Env is the value of a variable the container's env sets, and whether the
// kubelet resolves it instead (valueFrom): both empty when it is not set
// there (envFrom may still set it).
func (c *Container) Env(name string) (value string, resolved bool) {
	env := c.Get("env")
	if i := indexOfName(env, name); i >= 0 {
		e := env.Content[i]
		if ynode.Get(e, "valueFrom") != nil {
			return "", true
		}
		return ynode.ScalarValue(ynode.Get(e, "value")), false
	}
	return "", false
}

// Name is the container's name.
func (c *Container) Name() string { return ynode.ScalarValue(c.Get("name")) }

// Get returns a field of the container, or nil.
func (c *Container) Get(name string) *yaml.Node { return ynode.Get(c.node, name) }

// Set sets a field of the container.
func (c *Container) Set(name string, value *yaml.Node) { ynode.Set(c.node, name, value) }

// AddEnv appends a variable the container does not set itself: a value the
// user wrote wins over trainfn's.
func (c *Container) AddEnv(name, value string) {
	env := ynode.EnsureSeq(c.node, "env")
	if indexOfName(env, name) < 0 {
		env.Content = append(env.Content, ynode.Map("name", name, "value", value))
	}
}

// AddEnvFrom appends a variable read from the pod (valueFrom), unless the
// container sets it itself.
func (c *Container) AddEnvFrom(name string, valueFrom *yaml.Node) {
	env := ynode.EnsureSeq(c.node, "env")
	if indexOfName(env, name) < 0 {
		env.Content = append(env.Content, ynode.Map("name", name, "valueFrom", valueFrom))
	}
}

// Port is the container port so named, if the container declares it.
func (c *Container) Port(name string) (int32, bool) {
	ports := c.Get("ports")
	if i := indexOfName(ports, name); i >= 0 {
		var port int32
		if n := ynode.Get(ports.Content[i], "containerPort"); n != nil && n.Decode(&port) == nil {
			return port, true
		}
	}
	return 0, false
}

// SetDefaultPort declares a named container port, unless the container
// already declares one of that name.
func (c *Container) SetDefaultPort(name string, port int32) {
	if _, ok := c.Port(name); !ok {
		ports := ynode.EnsureSeq(c.node, "ports")
		ports.Content = append(ports.Content, ynode.Map("name", name, "containerPort", port))
	}
}

// AddVolumeMount mounts a volume, unless the container already mounts
// something at that path.
func (c *Container) AddVolumeMount(volume, mountPath string) *field.Error {
	mounts := ynode.EnsureSeq(c.node, "volumeMounts")
	for i, m := range mounts.Content {
		if p := ynode.Get(m, "mountPath"); p != nil && path.Clean(p.Value) == path.Clean(mountPath) {
			return duplicate(c.path.Child("volumeMounts").Index(i).Child("mountPath"), p.Value,
				"trainfn mounts the "+volume+" volume there")
		}
	}
	mounts.Content = append(mounts.Content, ynode.Map("name", volume, "mountPath", mountPath))
	return nil
}

func duplicate(path *field.Path, value, why string) *field.Error {
	return &field.Error{Type: field.ErrorTypeDuplicate, Field: path.String(), BadValue: value, Detail: why}
}

// indexOfName finds the item of a list of named objects with that name.
func indexOfName(seq *yaml.Node, name string) int {
	if seq == nil {
		return -1
	}
	return slices.IndexFunc(seq.Content, func(item *yaml.Node) bool {
		n := ynode.Get(item, "name")
		return n != nil && n.Value == name
	})
}
