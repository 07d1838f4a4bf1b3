package pod

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/ynode"
)

// ResourceErrors are the API server's rules for the resources of the
// template's containers and of the pod as a whole, as
// k8s.io/kubernetes/pkg/apis/core/validation (validateResourceRequirements,
// validatePodResources) words them. A job's pod template is not checked by
// these rules when the job is applied: the API server applies them when the
// Job or StatefulSet that carries the template is created, and a job whose
// workload is refused never starts (mpi-operator#25, kubeflow/trainer#2363).
// The rules that default a pod are applied first: a resource with a limit
// and no request requests its limit.
func (t *Template) ResourceErrors() field.ErrorList {
	var errs field.ErrorList
	spec := t.spec()
	var requests []resourceList
	var initRequests []resourceList
	for _, list := range []string{"containers", "initContainers"} {
		seq := ynode.Get(spec, list)
		if seq == nil {
			continue
		}
		for i, c := range seq.Content {
			at := t.Path(list).Index(i).Child("resources")
			r, rerrs := containerResources(ynode.Get(c, "resources"), at)
			errs = append(errs, rerrs...)
			if list == "containers" {
				requests = append(requests, r)
			} else {
				initRequests = append(initRequests, r)
			}
		}
	}
	if n := ynode.Get(spec, "resources"); n != nil {
		errs = append(errs, podResources(n, t.Path("resources"), aggregate(requests, initRequests))...)
	}
	return errs
}

// ContainerResourceErrors are the API server's rules for one container's
// resources (a ResourceRequirements mapping), for a renderer that merges a
// container's resources from more than one place and reports each rule
// where its value was written.
func ContainerResourceErrors(resources *yaml.Node, at *field.Path) field.ErrorList {
	_, errs := containerResources(resources, at)
	return errs
}

// resourceList is a container's requests after defaulting, by name.
type resourceList map[string]resource.Quantity

// quantities reads a requests or limits mapping; a value that is no
// quantity is the schema's to refuse, and is left out.
func quantities(n *yaml.Node) ([]string, resourceList) {
	var names []string
	list := resourceList{}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, list
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, value := n.Content[i].Value, n.Content[i+1]
		if value.Kind != yaml.ScalarNode || value.Tag == yaml.NodeTagNull {
			continue
		}
		q, err := resource.ParseQuantity(value.Value)
		if err != nil {
			continue
		}
		names = append(names, name)
		list[name] = q
	}
	return names, list
}

// containerResources checks a container's requests and limits and returns
// its requests as the API server defaults them.
func containerResources(n *yaml.Node, at *field.Path) (resourceList, field.ErrorList) {
	var errs field.ErrorList
	limitNames, limits := quantities(ynode.Get(n, "limits"))
	requestNames, requests := quantities(ynode.Get(n, "requests"))
	limPath, reqPath := at.Child("limits"), at.Child("requests")
	hugePages, cpuOrMemory := false, false
	for _, name := range limitNames {
		errs = append(errs, containerResourceName(name, limPath.Key(name))...)
		errs = append(errs, nonNegative(limits[name], limPath.Key(name))...)
		hugePages = hugePages || strings.HasPrefix(name, hugePagesPrefix)
		cpuOrMemory = cpuOrMemory || name == "cpu" || name == "memory"
		if _, ok := requests[name]; !ok {
			// The pod's defaults request what a resource is limited to.
			requests[name] = limits[name]
		}
	}
	for _, name := range requestNames {
		q := requests[name]
		errs = append(errs, containerResourceName(name, reqPath.Key(name))...)
		errs = append(errs, nonNegative(q, reqPath.Key(name))...)
		hugePages = hugePages || strings.HasPrefix(name, hugePagesPrefix)
		cpuOrMemory = cpuOrMemory || name == "cpu" || name == "memory"
		limit, ok := limits[name]
		switch {
		case ok && q.Cmp(limit) != 0 && !overcommitAllowed(name):
			errs = append(errs, field.Invalid(reqPath.Key(name), q.String(), fmt.Sprintf("must be equal to %s limit of %s", name, limit.String())))
		case ok && q.Cmp(limit) > 0:
			errs = append(errs, field.Invalid(reqPath.Key(name), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		case !ok && !overcommitAllowed(name):
			errs = append(errs, field.Required(limPath.Key(name), "Limit must be set for non overcommitable resources"))
		}
	}
	if hugePages && !cpuOrMemory {
		errs = append(errs, field.Forbidden(at, "HugePages require cpu or memory"))
	}
	return requests, errs
}

const hugePagesPrefix = "hugepages-"

// overcommitAllowed: a request may be less than its limit only for native
// resources (no domain, or kubernetes.io's) other than huge pages; an
// extended resource (nvidia.com/gpu, vpc.amazonaws.com/efa) must request
// what it limits.
func overcommitAllowed(name string) bool {
	native := !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/")
	return native && !strings.HasPrefix(name, hugePagesPrefix)
}

// containerResourceName is the API server's check of a container's
// resource name: a standard one, or an extended resource's qualified name.
func containerResourceName(name string, at *field.Path) field.ErrorList {
	if !strings.Contains(name, "/") {
		if name == "cpu" || name == "memory" || name == "ephemeral-storage" || strings.HasPrefix(name, hugePagesPrefix) {
			return nil
		}
		return field.ErrorList{field.Invalid(at, name, "must be a standard resource for containers")}
	}
	if len(validation.IsQualifiedName(name)) > 0 || strings.HasPrefix(name, "requests.") {
		return field.ErrorList{field.Invalid(at, name, "doesn't follow extended resource name standard")}
	}
	return nil
}

func nonNegative(q resource.Quantity, at *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(at, q.String(), "must be greater than or equal to 0")}
	}
	return nil
}

// podLevel are the resources a pod's spec.resources may name (Kubernetes
// 1.34 and later refuse any other; earlier ones dropped the field, and the
// pod ran without what it asked for).
var podLevel = []string{"cpu", "hugepages-", "memory"}

// podResources checks spec.resources: the names it may hold, requests
// within limits, and requests no less than its containers' together.
func podResources(n *yaml.Node, at *field.Path, containers resourceList) field.ErrorList {
	var errs field.ErrorList
	limitNames, limits := quantities(ynode.Get(n, "limits"))
	requestNames, requests := quantities(ynode.Get(n, "requests"))
	for _, part := range []struct {
		names []string
		path  *field.Path
	}{{limitNames, at.Child("limits")}, {requestNames, at.Child("requests")}} {
		for _, name := range part.names {
			if !slices.Contains(podLevel, name) && !strings.HasPrefix(name, hugePagesPrefix) {
				errs = append(errs, field.NotSupported(part.path.Key(name), name, podLevel))
			}
		}
	}
	for _, name := range requestNames {
		q := requests[name]
		if limit, ok := limits[name]; ok && q.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(at.Child("requests").Key(name), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
		if sum, ok := containers[name]; ok && q.Cmp(sum) < 0 && slices.Contains(podLevel, name) {
			errs = append(errs, field.Invalid(at.Child("requests").Key(name), q.String(), fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", sum.String())))
		}
	}
	return errs
}

// aggregate is what the containers request together: the sum of the
// containers', or the most one init container requests, whichever is more.
func aggregate(containers, inits []resourceList) resourceList {
	total := resourceList{}
	for _, c := range containers {
		for name, q := range c {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	for _, c := range inits {
		for name, q := range c {
			if sum, ok := total[name]; !ok || q.Cmp(sum) > 0 {
				total[name] = q
			}
		}
	}
	return total
}
