package progress

import (
	"path"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/ynode"
)

// pass edits the pod templates of one job.
type pass struct {
	// doc is the job's document, where what is in the way is found.
	doc *yaml.Node
	url string
	// ca is the ConfigMap of the server's CA.
	ca string
	// at is where the job turns progress on; nil when the function config
	// does.
	at *field.Path

	errs     field.ErrorList
	warnings []result.Warning
	// reported are the paths already reported: a template of the job spec
	// may render into several workloads.
	reported map[string]bool
}

// template gives a workload's pod template the volume, and every container
// of it the variables and the mount.
func (p *pass) template(o *yaml.RNode, t *yaml.Node) {
	what := o.GetKind() + " " + o.GetName()
	spec := ynode.EnsureMap(t, "spec")
	volumes := ynode.EnsureSeq(spec, "volumes")
	if indexOfName(volumes, VolumeName) >= 0 {
		at, elsewhere := p.find(func(key string, item *yaml.Node) bool {
			return key == "volumes" && ynode.ScalarValue(ynode.Get(item, "name")) == VolumeName
		}, "name")
		p.fail(at, VolumeName, "trainfn adds a volume of this name to every pod of a job that reports progress ("+
			handoff.Progress+"), the pods of the "+what+elsewhere+" among them: rename this volume")
	}
	for _, list := range []string{"initContainers", "containers"} {
		seq := ynode.Get(spec, list)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range seq.Content {
			p.container(what, c)
		}
	}
	volumes.Content = append(volumes.Content, p.volume())
}

// container gives a container Trainer's variables and the volume's mount.
func (p *pass) container(what string, c *yaml.Node) {
	name := ynode.ScalarValue(ynode.Get(c, "name"))
	mounts := ynode.EnsureSeq(c, "volumeMounts")
	for _, m := range mounts.Content {
		if mountPath := ynode.ScalarValue(ynode.Get(m, "mountPath")); mountPath != "" && path.Clean(mountPath) == MountPath {
			at, elsewhere := p.find(func(key string, item *yaml.Node) bool {
				return key == "volumeMounts" && ynode.ScalarValue(ynode.Get(item, "name")) == ynode.ScalarValue(ynode.Get(m, "name")) &&
					path.Clean(ynode.ScalarValue(ynode.Get(item, "mountPath"))) == MountPath
			}, "mountPath")
			p.fail(at, mountPath, "trainfn mounts the "+VolumeName+" volume there in every container of a job that reports progress ("+
				handoff.Progress+"), the container "+name+" of the "+what+elsewhere+" among them: mount this volume elsewhere")
		}
	}
	mounts.Content = append(mounts.Content, ynode.Map("name", VolumeName, "mountPath", MountPath, "readOnly", true))

	env := ynode.EnsureSeq(c, "env")
	for _, v := range []string{URLVariable, CACertVariable, TokenVariable} {
		if indexOfName(env, v) < 0 {
			continue
		}
		at, elsewhere := p.find(func(key string, item *yaml.Node) bool {
			return key == "env" && ynode.ScalarValue(ynode.Get(item, "name")) == v
		}, "name")
		p.warn(at, v, "replaced by trainfn's own in the container "+name+" of the "+what+elsewhere+
			": a job that reports progress ("+handoff.Progress+") gives every container Kubeflow Trainer's variables, "+
			"whose values win over the container's, as Trainer's do; remove it, or turn progress off for the job")
		env.Content = slices.DeleteFunc(env.Content, func(e *yaml.Node) bool { return ynode.ScalarValue(ynode.Get(e, "name")) == v })
	}
	if indexOfName(env, NamespaceVariable) < 0 {
		env.Content = append(env.Content, ynode.Map("name", NamespaceVariable,
			"valueFrom", ynode.Map("fieldRef", ynode.Map("fieldPath", "metadata.namespace"))))
	}
	env.Content = append(env.Content,
		ynode.Map("name", URLVariable, "value", p.url),
		ynode.Map("name", CACertVariable, "value", path.Join(MountPath, handoff.ProgressCAKey)),
		ynode.Map("name", TokenVariable, "value", path.Join(MountPath, tokenFile)))
}

// volume is the projected volume of the token and the CA: both a pod under
// Pod Security's restricted level may mount.
func (p *pass) volume() *yaml.Node {
	return ynode.Map("name", VolumeName, "projected", ynode.Map("sources", ynode.Seq(
		ynode.Map("serviceAccountToken", ynode.Map(
			"audience", handoff.ProgressAudience,
			"expirationSeconds", TokenExpirationSeconds,
			"path", tokenFile)),
		ynode.Map("configMap", ynode.Map(
			"name", p.ca,
			"items", ynode.Seq(ynode.Map("key", handoff.ProgressCAKey, "path", handoff.ProgressCAKey)))),
	)))
}

// fail reports what is in the way, once per place, as warn does.
func (p *pass) fail(at *field.Path, value, detail string) {
	if p.once(at.String() + "\x00" + value) {
		p.errs = append(p.errs, &field.Error{Type: field.ErrorTypeDuplicate, Field: at.String(), BadValue: value, Detail: detail})
	}
}

// warn reports what is replaced, once per place: the first workload's
// name stands for those of the same template.
func (p *pass) warn(at *field.Path, value, message string) {
	if p.once(at.String() + "\x00" + value) {
		p.warnings = append(p.warnings, result.Warning{Field: at, Message: message})
	}
}

func (p *pass) once(key string) bool {
	if p.reported == nil {
		p.reported = map[string]bool{}
	}
	if p.reported[key] {
		return false
	}
	p.reported[key] = true
	return true
}

// indexOfName finds the item of a list of named objects with that name.
func indexOfName(seq *yaml.Node, name string) int {
	return slices.IndexFunc(seq.Content, func(item *yaml.Node) bool {
		return ynode.ScalarValue(ynode.Get(item, "name")) == name
	})
}
