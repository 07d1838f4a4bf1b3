package jobdiff

import (
	"cmp"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/gang"
	"github.com/trainfn/trainfn/render/gitops"
	"github.com/trainfn/trainfn/render/handoff"
)

// byJob groups the objects trainfn rendered by the job they carry the
// labels of; a job's kind is on its workloads. Other objects are left out.
func byJob(objects []*yaml.RNode) map[jobKey][]*yaml.RNode {
	type named struct{ namespace, name string }
	groups := map[named][]*yaml.RNode{}
	kinds := map[named]string{}
	for _, o := range objects {
		labels := o.GetLabels()
		if labels[handoff.OperatorNameLabel] != handoff.Operator || labels[handoff.JobNameLabel] == "" {
			continue
		}
		n := named{o.GetNamespace(), labels[handoff.JobNameLabel]}
		groups[n] = append(groups[n], o)
		if k := labels[handoff.KindLabel]; k != "" {
			kinds[n] = k
		}
	}
	out := map[jobKey][]*yaml.RNode{}
	for n, objs := range groups {
		out[jobKey{kinds[n], n.namespace, n.name}] = objs
	}
	return out
}

// inOrder is objects sorted by kind and name, as neither a renderer's
// output nor another tool's need be.
func inOrder(objects []*yaml.RNode) []*yaml.RNode {
	return slices.SortedFunc(slices.Values(objects), func(a, b *yaml.RNode) int {
		return cmp.Or(cmp.Compare(a.GetApiVersion(), b.GetApiVersion()), cmp.Compare(a.GetKind(), b.GetKind()), cmp.Compare(a.GetName(), b.GetName()))
	})
}

// compareObjects says what replacing a job's rendered objects does,
// naming the fields of the objects: for a restart those of what the pods
// run (gitops.WhatPodsRun), else every field changed, but the labels that
// only follow the digest.
func compareObjects(key jobKey, was, is []*yaml.RNode) (Change, error) {
	c := key.change(Unchanged)
	if textOf(inOrder(was)) == textOf(inOrder(is)) {
		return c, nil
	}
	c.Effect = InPlace
	project := func(m map[string]any) map[string]any { return m }
	if digestOf(was) != digestOf(is) {
		c.Effect = Restarts
		project = gitops.WhatPodsRun
	}
	before, err := byIdentity(was)
	if err != nil {
		return Change{}, err
	}
	after, err := byIdentity(is)
	if err != nil {
		return Change{}, err
	}
	for _, id := range identities(before, after) {
		old, revised := before[id], after[id]
		if old == nil || revised == nil {
			// Added or removed: named if pods run it.
			present := old
			if present == nil {
				present = revised
			}
			if project(present) != nil {
				c.Fields = append(c.Fields, id.String())
			}
			continue
		}
		var edits []edit
		diff(project(old), project(revised), nil, nil, &edits)
		for _, e := range edits {
			if !followsTheDigest(e) {
				c.Fields = append(c.Fields, id.String()+" "+e.path.String())
			}
		}
	}
	slices.Sort(c.Fields)
	return c, nil
}

// identity names an object of a job.
type identity struct{ kind, name string }

func (id identity) String() string { return id.kind + " " + id.name }

func byIdentity(objects []*yaml.RNode) (map[identity]map[string]any, error) {
	out := map[identity]map[string]any{}
	for _, o := range objects {
		m, err := o.Map()
		if err != nil {
			return nil, err
		}
		out[identity{o.GetKind(), o.GetName()}] = m
	}
	return out, nil
}

func identities(maps ...map[identity]map[string]any) []identity {
	var out []identity
	for _, m := range maps {
		for id := range m {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// followsTheDigest tells an edit of a label that changes with the render
// digest alone: the digest's, and the Kueue pod group named after it.
func followsTheDigest(e edit) bool {
	if len(e.at) == 0 {
		return false
	}
	last, _ := e.at[len(e.at)-1].(string)
	return last == handoff.DigestLabel || last == gang.KueuePodGroupLabel
}
