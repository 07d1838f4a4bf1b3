package schemas

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// cueLabels turns a CUE error path into plain labels: the definition that
// was unified with the document is not part of the user's path, and labels
// that are not identifiers come quoted.
func cueLabels(path []string) []string {
	var out []string
	for _, l := range path {
		if strings.HasPrefix(l, "#") && len(out) == 0 {
			continue
		}
		if u, err := strconv.Unquote(l); err == nil {
			l = u
		}
		out = append(out, l)
	}
	if n := len(out); n > 0 && out[n-1] == ObjectRule {
		// A rule on a whole object, such as a CRD's CEL rule, is reported
		// at the object.
		out = out[:n-1]
	}
	return out
}

// ObjectRule is the hidden field a schema sets to an error to report a
// rule broken by an object as a whole, at the object.
const ObjectRule = "_rule"

// hidden reports whether a path goes through a schema's own bookkeeping
// (hidden fields or lets), which users never write.
func hidden(labels []string) bool {
	for _, l := range labels {
		if strings.HasPrefix(l, "_") {
			return true
		}
	}
	return false
}

// valueAt returns the document's value at a path as plain Go data, for
// quoting in messages, and its CUE kind; nil and "" when the path is not in
// the document.
func valueAt(data cue.Value, labels []string) (any, string) {
	v := data
	for _, l := range labels {
		var next cue.Value
		if i, err := strconv.Atoi(l); err == nil && v.Kind() == cue.ListKind {
			next = v.LookupPath(cue.MakePath(cue.Index(i)))
		} else {
			next = v.LookupPath(cue.MakePath(cue.Str(l)))
		}
		if !next.Exists() {
			return nil, ""
		}
		v = next
	}
	var out any
	if err := v.Decode(&out); err != nil {
		return nil, ""
	}
	return out, v.Kind().String()
}

// cueText writes a scalar the way CUE quotes values in its messages.
func cueText(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(t)
	case nil:
		return "null"
	default:
		return fmt.Sprint(t)
	}
}

func allStrings(args []any) bool {
	for _, a := range args {
		if _, ok := a.(string); !ok {
			return false
		}
	}
	return true
}

var literal = regexp.MustCompile(`^("([^"\\]|\\.)*"|-?[0-9][0-9_.eE+-]*|true|false|null)$`)

func isLiteral(s string) bool { return literal.MatchString(s) }

func unquoteAll(literals []string) []string {
	out := make([]string, len(literals))
	for i, l := range literals {
		if u, err := strconv.Unquote(l); err == nil {
			l = u
		}
		out[i] = l
	}
	return out
}

// kindPhrase names a CUE kind in words.
func kindPhrase(kind string) string {
	switch kind {
	case "int":
		return "an integer"
	case "float", "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "struct":
		return "a mapping"
	case "list":
		return "a list"
	case "null":
		return "null"
	}
	return kind
}

// boundRule words a bound such as ">=1" or "<=2147483647".
func boundRule(bound string) string {
	ops := []struct{ op, words string }{
		{">=", "greater than or equal to"},
		{"<=", "less than or equal to"},
		{">", "greater than"},
		{"<", "less than"},
		{"!=", "different from"},
	}
	for _, o := range ops {
		if !strings.HasPrefix(bound, o.op) {
			continue
		}
		n := strings.TrimPrefix(bound, o.op)
		switch n {
		case strconv.Itoa(math.MaxInt32), strconv.Itoa(math.MinInt32):
			return "must fit in a 32-bit integer"
		case strconv.FormatInt(math.MaxInt64, 10), strconv.FormatInt(math.MinInt64, 10):
			return "must fit in a 64-bit integer"
		}
		return "must be " + o.words + " " + n
	}
	return "must satisfy " + bound
}

// listLengthRule words a list that is shorter than a schema's minimum
// length, as `[_, ...]` writes "at least one".
func listLengthRule(want any) string {
	if fmt.Sprint(want) == "1" {
		return "must not be empty"
	}
	return fmt.Sprintf("must have at least %v items", want)
}

var minItems = regexp.MustCompile(`^list\.MinItems\((\d+)\)$`)

// validatorRule words a CUE validator call as it appears in messages.
func validatorRule(v string) string {
	switch {
	case v == "list.MinItems(1)":
		return "must not be empty"
	case minItems.MatchString(v):
		return "must have at least " + minItems.FindStringSubmatch(v)[1] + " items"
	case strings.HasPrefix(v, "matchN(1, [int, string])"):
		return "must be an integer or a string"
	case strings.HasPrefix(v, "time.Time"):
		return "must be an RFC 3339 date and time"
	}
	return "must satisfy " + v
}

// nearest returns the candidate a misspelt name most likely meant: the same
// name in another case, or one within a small edit distance.
func nearest(name string, candidates []string) string {
	best, bestDist := "", len(name)/3+1
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := EditDistance(strings.ToLower(name), strings.ToLower(c)); d < bestDist || (d == bestDist && best != "" && c < best) {
			if d <= len(name)/3+1 {
				best, bestDist = c, d
			}
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of two strings, in bytes: the
// names it compares are ASCII.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// removedMetadata are fields of object metadata that the API server once
// wrote and has since removed from the API: a manifest saved with `kubectl
// get -o yaml` from an older cluster still carries them.
var removedMetadata = map[string]string{
	"clusterName":  "1.25",
	"initializers": "1.14",
}

// renamed are fields a manifest takes from elsewhere than the API it is
// written for, by path: another name for a field the API has, or a fork's.
var renamed = map[string]string{
	"spec.elasticPolicy.backend": "the elastic proposal's Go types call it backend; PyTorchJob's field is spec.elasticPolicy.rdzvBackend (c10d, etcd or etcd-v2)",
	"spec.launcherResources": "a field of Alibaba's mpi-operator fork, which Arena's charts write; no upstream MPIJob has it: " +
		"give the launcher's container its resources in its template (mpiReplicaSpecs.Launcher.template.spec.containers[0].resources)",
	"spec.mountsOnLauncher": "a field of Alibaba's mpi-operator fork, which Arena's charts write; no upstream MPIJob has it: " +
		"mount the volumes in the launcher's own template (mpiReplicaSpecs.Launcher.template.spec), as in the workers'",
	// Kubeflow Trainer v2.2.0 removed these from its runtimes and TrainJob
	// (CHANGELOG-2.2.md, Breaking Changes); Trainer's own docs still
	// write some of them.
	"spec.mlPolicy.torch.numProcPerNode": "removed in Kubeflow Trainer v2.2.0 (kubeflow/trainer#3239): set spec.trainer.numProcPerNode " +
		"(an integer) on the TrainJob instead; without it torch runs a process per GPU, else per CPU",
	"spec.mlPolicy.torch.elasticPolicy": "removed in Kubeflow Trainer v2.2.0 (kubeflow/trainer#3235): a TrainJob runs a fixed number of nodes, " +
		"spec.trainer.numNodes; an elastic job is a PyTorchJob's spec.elasticPolicy",
	"spec.podTemplateOverrides": "replaced by spec.runtimePatches in Kubeflow Trainer v2.2.0 (kubeflow/trainer#3309): each patch names its manager " +
		"and changes the runtime's trainingRuntimeSpec.template.spec.replicatedJobs by name",
}

// misplaced explains an unknown field whose name is known from elsewhere:
// a run policy field at the top of a spec, where older APIs kept it before
// training-operator's kubeflow.org/v1 and mpi-operator's v2beta1 moved it
// into runPolicy, a field another API or a fork names (renamed), or
// metadata an older API server wrote. "" for any other.
func misplaced(parent cue.Value, name string, path *field.Path) string {
	if runPolicy, ok := lookupField(parent, "runPolicy"); ok {
		if _, ok := lookupField(runPolicy, name); ok && runPolicy.IncompleteKind() == cue.StructKind {
			return fmt.Sprintf("it belongs in %s.runPolicy.%s (older APIs, pytorch-operator's, tf-operator's and mpi-operator's v1alpha2, and Alibaba's mpi-operator fork read it at the top of spec)",
				strings.TrimSuffix(path.String(), "."+name), name)
		}
	}
	if hint, ok := renamed[path.String()]; ok {
		return hint
	}
	// Only the object's own metadata: the API server writes none into a
	// pod template's.
	if version, ok := removedMetadata[name]; ok && path.String() == "metadata."+name {
		return fmt.Sprintf("the API server wrote it before Kubernetes %s removed it, and `kubectl get -o yaml` of an older cluster leaves it in a saved manifest: delete it", version)
	}
	return ""
}
