package mpijob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/workload"
)

// rshNetworkPolicy is what the Rsh launch mode's trust rests on: rshd
// trusts any peer that reaches it from a privileged port, so the job's
// workers admit the job's own pods alone, on every port (MPI's processes
// talk to each other on ports of their choosing). A selected pod admits
// nothing else: a peer outside the job (a metrics scraper, say) needs a
// policy of its own.
func rshNetworkPolicy(job *Job) *yaml.RNode {
	return job.AdmitOnly(handoff.RshPolicyName(job.Name), handoff.JobLabels(job.Name),
		handoff.RoleLabels(job.Name, handoff.RoleWorker), handoff.JobLabels(job.Name))
}

// checkRsh refuses what the Rsh launch mode cannot keep safe or run: a
// pod on the host's network, which no NetworkPolicy covers (rshd would
// trust every host on the node's port 514, and a launcher there dials
// from the node's address, which the policy does not admit), and workers
// that do not run as root, as rshd must.
func checkRsh(job *Job) field.ErrorList {
	var errs field.ErrorList
	for _, r := range []*workload.Replica{&job.Launcher, job.Worker} {
		if r == nil {
			continue
		}
		t := pod.NewTemplate(r.Template, r.Path)
		if t.Bool("hostNetwork") {
			errs = append(errs, field.Invalid(t.Path("hostNetwork"), true,
				"the Rsh launch mode keeps rsh to the job's pods with a NetworkPolicy, which does not cover pods on the host's network: use the SSH launch mode"))
		}
	}
	if w := job.Worker; w != nil {
		t := pod.NewTemplate(w.Template, w.Path)
		if root, known := t.RunsAsRoot(); known && !root {
			errs = append(errs, field.Invalid(w.Path.Child("spec", "securityContext"), "non-root",
				"the workers run rshd in the Rsh launch mode, which runs as root: let them run as root, or use the SSH launch mode"))
		}
	}
	return errs
}
