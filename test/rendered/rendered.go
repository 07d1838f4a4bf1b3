// Package rendered reads trainfn's output the way a cluster runs it: the
// pods its Jobs create, with the hostnames, labels, environment and
// commands their containers get, and the names cluster DNS gives them. Tests
// that run real programs in stand-in pods take everything from here, never
// from a hand-written copy.
package rendered

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"

	"github.com/trainfn/trainfn/test/netns"
)

// Namespace is where tests pretend the output was applied; the names the
// output promises must not depend on it.
const Namespace = "team-a"

// Output is a rendered stream's Jobs, Services and ConfigMaps.
type Output struct {
	Jobs       []batchv1.Job
	Services   []corev1.Service
	ConfigMaps []corev1.ConfigMap
}

// Parse reads a rendered YAML stream.
func Parse(t testing.TB, stream []byte) *Output {
	t.Helper()
	out := &Output{}
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var raw map[string]any
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("reading the rendered output: %v", err)
		}
		doc, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		switch raw["kind"] {
		case "Job":
			var job batchv1.Job
			decodeStrict(t, doc, &job)
			out.Jobs = append(out.Jobs, job)
		case "Service":
			var svc corev1.Service
			decodeStrict(t, doc, &svc)
			out.Services = append(out.Services, svc)
		case "ConfigMap":
			var cm corev1.ConfigMap
			decodeStrict(t, doc, &cm)
			out.ConfigMaps = append(out.ConfigMaps, cm)
		}
	}
}

// ConfigMap is the ConfigMap so named, or nil.
func (o *Output) ConfigMap(name string) *corev1.ConfigMap {
	for i := range o.ConfigMaps {
		if o.ConfigMaps[i].Name == name {
			return &o.ConfigMaps[i]
		}
	}
	return nil
}

// Job is the Job so named.
func (o *Output) Job(t testing.TB, name string) *batchv1.Job {
	t.Helper()
	for i := range o.Jobs {
		if o.Jobs[i].Name == name {
			return &o.Jobs[i]
		}
	}
	t.Fatalf("the output has no Job %s", name)
	return nil
}

// Pod is a pod a Job creates.
type Pod struct {
	// Index is the pod's completion index in an Indexed Job, else -1.
	Index     int
	Hostname  string
	Subdomain string
	Labels    map[string]string
	Spec      corev1.PodSpec
}

// PodOf is the pod a Job creates for a completion index (ignored unless the
// Job is Indexed), as the Job controller makes it: the hostname <job>-<i>,
// the index label, and the JOB_COMPLETION_INDEX variable.
func PodOf(job *batchv1.Job, index int) *Pod {
	p := &Pod{Index: -1, Hostname: job.Spec.Template.Spec.Hostname, Subdomain: job.Spec.Template.Spec.Subdomain,
		Labels: map[string]string{batchv1.JobNameLabel: job.Name}, Spec: *job.Spec.Template.Spec.DeepCopy()}
	for k, v := range job.Spec.Template.Labels {
		p.Labels[k] = v
	}
	if ptr.Deref(job.Spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion {
		p.Index = index
		if p.Hostname == "" {
			p.Hostname = job.Name + "-" + strconv.Itoa(index)
		}
		p.Labels[batchv1.JobCompletionIndexAnnotation] = strconv.Itoa(index)
		for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for i := range list {
				list[i].Env = append(list[i].Env, corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", Value: strconv.Itoa(index)})
			}
		}
	}
	return p
}

// Pods are the pods a Job starts with.
func Pods(job *batchv1.Job) []*Pod {
	var pods []*Pod
	for i := range int(ptr.Deref(job.Spec.Parallelism, 1)) {
		pods = append(pods, PodOf(job, i))
	}
	return pods
}

// Container is the pod's container (or init container) so named.
func (p *Pod) Container(t testing.TB, name string) corev1.Container {
	t.Helper()
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("pod %s has no container %s", p.Hostname, name)
	return corev1.Container{}
}

// Env is a container's environment as the kubelet sets it: the image's
// variables, then the container's, each value with $(VAR) references to
// the container's earlier ones expanded, and the fields of the pod it may
// refer to.
func (p *Pod) Env(t testing.TB, c corev1.Container, image []string) []string {
	t.Helper()
	env, own := map[string]string{}, map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	for _, kv := range image {
		k, v, _ := strings.Cut(kv, "=")
		set(k, v)
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			own[e.Name] = expand(e.Value, own)
			set(e.Name, own[e.Name])
		case e.ValueFrom.FieldRef != nil:
			own[e.Name] = p.field(t, e.ValueFrom.FieldRef.FieldPath)
			set(e.Name, own[e.Name])
		default:
			t.Fatalf("container %s: variable %s comes from a source this test cannot stand in for", c.Name, e.Name)
		}
	}
	if len(c.EnvFrom) > 0 {
		t.Fatalf("container %s: envFrom is not stood in for", c.Name)
	}
	out := make([]string, len(order))
	for i, k := range order {
		out[i] = k + "=" + env[k]
	}
	return out
}

// Argv is a container's command and arguments, references expanded; the
// image has no entrypoint, so a container without a command is an error.
func (p *Pod) Argv(t testing.TB, c corev1.Container, env []string) []string {
	t.Helper()
	if len(c.Command) == 0 {
		t.Fatalf("container %s has no command, and the stand-in image no entrypoint", c.Name)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	var argv []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		argv = append(argv, expand(a, vars))
	}
	return argv
}

func (p *Pod) field(t testing.TB, path string) string {
	switch path {
	case "metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']",
		"metadata.labels['" + batchv1.JobCompletionIndexAnnotation + "']":
		if p.Index < 0 {
			t.Fatalf("field %s of a pod of a Job that is not Indexed", path)
		}
		return strconv.Itoa(p.Index)
	case "metadata.namespace":
		return Namespace
	}
	t.Fatalf("field %s is not stood in for", path)
	return ""
}

var reference = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// expand replaces $(VAR) with the value of a defined variable and $$ with
// $, leaving an undefined reference as written, as the kubelet does.
func expand(s string, vars map[string]string) string {
	return reference.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		if v, ok := vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// Hosts is the /etc/hosts that stands in, for pod self at address ip, for
// the kubelet's hosts file and cluster DNS, given the running pods'
// addresses: its own line as the kubelet writes it, <hostname>.<subdomain>
// for every running pod under a headless Service of that name, and a
// headless Service's own name when it selects exactly one running pod.
func (o *Output) Hosts(self *Pod, ip string, running map[*Pod]string) []netns.HostsLine {
	own := []string{self.Hostname}
	if self.Subdomain != "" {
		own = []string{fqdn(self.Hostname + "." + self.Subdomain), self.Hostname}
	}
	lines := []netns.HostsLine{{IP: ip, Names: own}}
	for pod, addr := range running {
		if o.headless(pod.Subdomain) == nil || pod.Hostname == "" {
			continue
		}
		name := pod.Hostname + "." + pod.Subdomain
		lines = append(lines, netns.HostsLine{IP: addr, Names: []string{fqdn(name), name}})
	}
	for _, svc := range o.Services {
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			continue
		}
		var selected []string
		for pod, addr := range running {
			if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
				selected = append(selected, addr)
			}
		}
		if len(selected) == 1 {
			lines = append(lines, netns.HostsLine{IP: selected[0], Names: []string{fqdn(svc.Name), svc.Name}})
		}
	}
	// Map order is random; a hosts file reads the same every time.
	slices.SortStableFunc(lines[1:], func(a, b netns.HostsLine) int { return strings.Compare(a.Names[0], b.Names[0]) })
	return lines
}

func (o *Output) headless(name string) *corev1.Service {
	for i, svc := range o.Services {
		if svc.Name == name && svc.Spec.ClusterIP == corev1.ClusterIPNone {
			return &o.Services[i]
		}
	}
	return nil
}

func fqdn(name string) string { return fmt.Sprintf("%s.%s.svc.cluster.local", name, Namespace) }
