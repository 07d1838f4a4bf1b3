// Package jobdiff tells what syncing a revision of job specs does to each
// job of the revision before it: restarts it, updates it in place, leaves
// it, starts it or deletes it, with the fields of its spec that make it so.
//
// A job restarts when what its pods run changes: its render digest
// (gitops.Digest), on every pod template it renders, differs. Which edits
// force it is found by rendering the old spec with each edit alone.
package jobdiff

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/functions"
	"github.com/trainfn/trainfn/render/handoff"
)

// Effect is what a sync does to a job.
type Effect int

const (
	Unchanged Effect = iota
	InPlace
	Restarts
	Added
	Removed
)

func (e Effect) String() string {
	return [...]string{"unchanged", "updated in place", "restarts", "added", "removed"}[e]
}

// Change is the effect of a sync on one job, and the fields of its spec
// that cause it: for Restarts those that force the restart, for InPlace
// every field edited.
type Change struct {
	Kind, Namespace, Name string
	Effect                Effect
	Fields                []string
}

// String is the change's line: "<Kind> <name>: <effect> (<fields>)", the
// name after its namespace when it has one.
func (c Change) String() string {
	line := fmt.Sprintf("%s: %s", c.job(), c.Effect)
	if len(c.Fields) > 0 {
		line += " (" + strings.Join(c.Fields, ", ") + ")"
	}
	return line
}

// job is "<Kind> <name>", the name after its namespace when it has one.
func (c Change) job() string {
	if c.Namespace != "" {
		return c.Kind + " " + c.Namespace + "/" + c.Name
	}
	return c.Kind + " " + c.Name
}

// Compare pairs the jobs of two revisions by kind, namespace and name, and
// says what syncing the new one does to each, in that order. A revision
// holds job specs, which render with its own TrainFn configuration and
// Trainer runtimes, or what trainfn rendered (kustomize build's output,
// say), whose objects are grouped by their job's labels. When either
// revision has an error, the error is its functions.Diagnostics, and no
// change is returned.
func Compare(old, revised []functions.Document) ([]Change, error) {
	for _, docs := range [][]functions.Document{old, revised} {
		if _, diags := functions.Expand(docs); diags.HasErrors() {
			return nil, diags
		}
	}
	before, after := split(old), split(revised)
	var changes []Change
	for key := range before.keys() {
		if !after.has(key) {
			changes = append(changes, key.change(Removed))
		}
	}
	for key := range after.keys() {
		if !before.has(key) {
			changes = append(changes, key.change(Added))
			continue
		}
		c, err := compare(key, before, after)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		changes = append(changes, c)
	}
	slices.SortFunc(changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return changes, nil
}

// compare says what a sync does to a job both revisions have: from its
// specs when both are specs, naming the spec's fields; else from the
// objects each renders, naming theirs.
func compare(key jobKey, before, after revision) (Change, error) {
	if was, is := before.specs[key], after.specs[key]; was != nil && is != nil {
		return compareJob(key, before.with(was), after.with(is))
	}
	was, err := before.objects(key)
	if err != nil {
		return Change{}, err
	}
	is, err := after.objects(key)
	if err != nil {
		return Change{}, err
	}
	return compareObjects(key, was, is)
}

// jobKey names a job across revisions.
type jobKey struct{ kind, namespace, name string }

func (k jobKey) change(e Effect) Change {
	return Change{Kind: k.kind, Namespace: k.namespace, Name: k.name, Effect: e}
}

func (k jobKey) String() string { return k.change(Unchanged).job() }

// revision is a revision's job specs and the documents they render with,
// and the objects trainfn rendered, by job.
type revision struct {
	context  []functions.Document
	specs    map[jobKey]*yaml.RNode
	rendered map[jobKey][]*yaml.RNode
}

func split(docs []functions.Document) revision {
	r := revision{specs: map[jobKey]*yaml.RNode{}}
	var rest []*yaml.RNode
	for _, d := range docs {
		switch {
		case functions.IsJob(d.Node):
			r.specs[jobKey{d.Node.GetKind(), d.Node.GetNamespace(), d.Node.GetName()}] = d.Node
		case functions.RendersJobs(d.Node):
			r.context = append(r.context, d)
		default:
			rest = append(rest, d.Node)
		}
	}
	r.rendered = byJob(rest)
	return r
}

// keys are the revision's jobs, specs and rendered.
func (r revision) keys() iter.Seq[jobKey] {
	return func(yield func(jobKey) bool) {
		for k := range r.specs {
			if !yield(k) {
				return
			}
		}
		for k := range r.rendered {
			if _, spec := r.specs[k]; !spec && !yield(k) {
				return
			}
		}
	}
}

func (r revision) has(key jobKey) bool {
	_, spec := r.specs[key]
	_, rendered := r.rendered[key]
	return spec || rendered
}

// objects are what the revision renders of a job.
func (r revision) objects(key jobKey) ([]*yaml.RNode, error) {
	if spec := r.specs[key]; spec != nil {
		out, err := r.with(spec).render(spec)
		return out.objects, err
	}
	return r.rendered[key], nil
}

// with is a renderer of job in the revision's context.
func (r revision) with(job *yaml.RNode) renderer {
	return renderer{context: r.context, job: job}
}

type renderer struct {
	context []functions.Document
	job     *yaml.RNode
}

// rendering is what a job spec renders: its objects, their text, and
// their digest.
type rendering struct {
	objects      []*yaml.RNode
	text, digest string
}

func (r renderer) render(job *yaml.RNode) (rendering, error) {
	docs := append(slices.Clip(r.context), functions.Document{Node: job.Copy()})
	objects, diags := functions.Expand(docs)
	if diags.HasErrors() {
		return rendering{}, diags
	}
	return rendering{objects: objects, text: textOf(objects), digest: digestOf(objects)}, nil
}

// digestOf is the render digest objects carry on their pod templates.
func digestOf(objects []*yaml.RNode) string {
	for _, o := range objects {
		n, err := o.Pipe(yaml.Lookup("spec", "template", "metadata", "labels", handoff.DigestLabel))
		if err == nil && n != nil {
			return yaml.GetValue(n)
		}
	}
	return ""
}

// textOf is objects' YAML, in their order.
func textOf(objects []*yaml.RNode) string {
	var text strings.Builder
	for _, o := range objects {
		text.WriteString(o.MustString())
		text.WriteString("---\n")
	}
	return text.String()
}

// compareJob says what replacing one job's old spec with its new one does.
func compareJob(key jobKey, old, revised renderer) (Change, error) {
	was, err := old.render(old.job)
	if err != nil {
		return Change{}, err
	}
	is, err := revised.render(revised.job)
	if err != nil {
		return Change{}, err
	}
	c := key.change(Unchanged)
	if was.text == is.text {
		return c, nil
	}
	edits, err := editsBetween(old.job, revised.job)
	if err != nil {
		return Change{}, err
	}
	c.Effect = InPlace
	if was.digest != is.digest {
		c.Effect = Restarts
		edits, err = forcing(old, edits)
		if err != nil {
			return Change{}, err
		}
	}
	for _, e := range edits {
		c.Fields = append(c.Fields, e.path.String())
	}
	return c, nil
}

// forcing are the edits that, each alone on the old spec, change its
// digest; all of them when none does alone, as when two edits only
// restart the job together. An edit the old spec does not render with
// alone counts as forcing.
func forcing(old renderer, edits []edit) ([]edit, error) {
	base, err := old.job.Map()
	if err != nil {
		return nil, err
	}
	// The spec as edits are applied to it, rendered once as it is: a
	// spec read back from a map has its keys sorted, which may order its
	// objects otherwise.
	plain, err := yaml.FromMap(base)
	if err != nil {
		return nil, err
	}
	was, err := old.render(plain)
	if err != nil {
		return nil, err
	}
	var out []edit
	for _, e := range edits {
		edited, err := yaml.FromMap(e.applyTo(base))
		if err != nil {
			return nil, err
		}
		is, err := old.render(edited)
		if err != nil || is.digest != was.digest {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return edits, nil
	}
	return out, nil
}
