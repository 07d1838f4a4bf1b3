package diserver

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// JobID names one generation of a DIJob as DI-engine's DI_JOB_ID does:
// namespace.name.generation.
type JobID struct {
	Namespace  string
	Name       string
	Generation int64
}

func (id JobID) String() string {
	return id.Namespace + "." + id.Name + "." + strconv.FormatInt(id.Generation, 10)
}

// job is the namespace/name form logs and messages use.
func (id JobID) job() string { return id.Namespace + "/" + id.Name }

// ParseJobID reads a job_id. A namespace cannot hold a dot and the
// generation is a number, so the namespace ends at the first dot, the
// generation starts after the last one, and the name is what lies between,
// dots included.
func ParseJobID(s string) (JobID, error) {
	namespace, rest, ok := strings.Cut(s, ".")
	last := strings.LastIndexByte(rest, '.')
	if !ok || last < 0 {
		return JobID{}, fmt.Errorf("job_id: %q is not namespace.name.generation", s)
	}
	name, generation := rest[:last], rest[last+1:]
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return JobID{}, fmt.Errorf("job_id: namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	// The name is both an object's name and the value of the job-name
	// label, so it must be valid as each.
	errs := validation.IsDNS1123Subdomain(name)
	errs = append(errs, validation.IsValidLabelValue(name)...)
	if len(errs) > 0 {
		return JobID{}, fmt.Errorf("job_id: name %q: %s", name, strings.Join(errs, "; "))
	}
	g, err := strconv.ParseInt(generation, 10, 64)
	// Only the canonical form: "+1" or "01" would name the same
	// generation under another job_id.
	if err != nil || g < 1 || strconv.FormatInt(g, 10) != generation {
		return JobID{}, fmt.Errorf("job_id: generation %q is not a positive integer", generation)
	}
	return JobID{Namespace: namespace, Name: name, Generation: g}, nil
}
