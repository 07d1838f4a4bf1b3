// Package naming derives the names of rendered objects from a job's name.
// They are the names the operators use, so that scripts, dashboards and
// `kubectl logs job/<job>-launcher` keep working.
package naming

import "strconv"

// Service is the headless Service that gives every pod of the job a DNS name.
func Service(job string) string { return job }

// ConfigMap holds the hostfile and the launcher's scripts.
func ConfigMap(job string) string { return job + "-config" }

// SSHSecret is the Secret with the job's SSH key, supplied by the user.
func SSHSecret(job string) string { return job + "-ssh" }

// RshPolicy is the NetworkPolicy that keeps the rsh port of the job's
// workers to the job's own pods.
func RshPolicy(job string) string { return job + "-rsh" }

// Launcher is the launcher's Job, and its pod's hostname.
func Launcher(job string) string { return job + "-launcher" }

// Master is the Job that runs a PyTorchJob's master.
func Master(job string) string { return job + "-master" }

// MasterHostname is the master's hostname: the one-pod Indexed Job Master
// names its pod's host <job>-master-0.
func MasterHostname(job string) string { return Master(job) + "-0" }

// Workers is the Indexed Job that runs the workers.
func Workers(job string) string { return job + "-worker" }

// WorkerHostname is the hostname of worker i; an Indexed Job names its pods'
// hosts <job name>-<index>.
func WorkerHostname(job string, i int) string { return Workers(job) + "-" + strconv.Itoa(i) }

// Host is how other pods of the job reach a pod: its hostname under the job's
// headless Service. It holds neither namespace nor cluster domain, which the
// pods' DNS search path supplies, so output applies to any namespace.
func Host(job, hostname string) string { return hostname + "." + Service(job) }

// WorkerHostParts splits worker hosts around their index: worker i's host,
// Host(job, WorkerHostname(job, i)), is prefix + i + suffix. A script can
// then name every worker from their count.
func WorkerHostParts(job string) (prefix, suffix string) {
	return Workers(job) + "-", Host(job, "")
}
