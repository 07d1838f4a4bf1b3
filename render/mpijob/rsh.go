package mpijob

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/labels"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/naming"
	"github.com/trainfn/trainfn/render/ynode"
)

// rshNetworkPolicy is what the Rsh launch mode's trust rests on: rshd
// trusts any peer that reaches it from a privileged port, so the rsh port
// of the job's workers admits the job's own pods alone. Every other port
// stays open to every peer, as without the policy: the policy selects
// the workers, and a selected pod admits only what some rule allows.
// The selector names no namespace, so the policy's own applies, and the
// output stays portable.
func rshNetworkPolicy(job *Job) *yaml.RNode {
	tcp := func(from, to int) *yaml.Node {
		return ynode.Map("protocol", "TCP", "port", from, "endPort", to)
	}
	return job.Object("networking.k8s.io/v1", "NetworkPolicy", naming.RshPolicy(job.Name), labels.Job(job.Name),
		"spec", ynode.Map(
			"podSelector", ynode.Map("matchLabels", ynode.StringMap(labels.Role(job.Name, labels.RoleWorker))),
			"policyTypes", []string{"Ingress"},
			"ingress", ynode.Seq(
				ynode.Map(
					"from", ynode.Seq(ynode.Map("podSelector", ynode.Map("matchLabels", ynode.StringMap(labels.Job(job.Name))))),
					"ports", ynode.Seq(ynode.Map("protocol", "TCP", "port", mpi.RshPort))),
				ynode.Map("ports", ynode.Seq(
					tcp(1, mpi.RshPort-1),
					tcp(mpi.RshPort+1, 65535),
					ynode.Map("protocol", "UDP"),
					ynode.Map("protocol", "SCTP"))),
			)))
}
