// Package gang holds the end-to-end test of Kubernetes' own gang
// scheduling (build tag e2e): a real control plane whose API server serves
// the scheduling.k8s.io PodGroup and whose kube-scheduler runs its
// GangScheduling plugin, with fake nodes whose room the test controls.
package gang
