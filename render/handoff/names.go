package handoff

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The names of rendered objects, derived from the job's name. They are the
// names the operators use, so that scripts, dashboards and `kubectl logs
// job/<job>-launcher` keep working; the reconciler finds a job's ConfigMap,
// workers and SSH Secret by them.

// ServiceName is the headless Service that gives every pod of the job a DNS
// name.
func ServiceName(job string) string { return job }

// PyTorchJobServiceName is a PyTorchJob's headless Service, under which
// its pods' hostnames resolve. training-operator has no Service of the
// job's own name, and a TrainJob migrated from the PyTorchJob keeps the
// name (Trainer's migration guide) and has that Service, as JobSet names
// it: the two coexist in a namespace, as they do under both operators.
func PyTorchJobServiceName(job string) string { return job + "-pytorch" }

// ConfigMapName holds the hostfile and the launcher's scripts.
func ConfigMapName(job string) string { return job + "-config" }

// SSHSecretName is the Secret with the job's SSH key, supplied by the user
// or created by the reconciler.
func SSHSecretName(job string) string { return job + "-ssh" }

// MPISSHAuthSecretName is a TrainJob's SSH Secret, named as Kubeflow
// Trainer names it, supplied by the user or created by the reconciler.
func MPISSHAuthSecretName(job string) string { return job + "-mpi-ssh-auth" }

// SSHSecretNames are the names a job's SSH Secret may have.
func SSHSecretNames(job string) []string {
	return []string{SSHSecretName(job), MPISSHAuthSecretName(job)}
}

// RshPolicyName is the NetworkPolicy that keeps the rsh port of the job's
// workers to the job's own pods.
func RshPolicyName(job string) string { return job + "-rsh" }

// LauncherName is the launcher's Job, and its pod's hostname.
func LauncherName(job string) string { return job + "-launcher" }

// MasterName is the Job that runs a PyTorchJob's master.
func MasterName(job string) string { return job + "-master" }

// MasterHostname is the master's hostname: the one-pod Indexed Job
// MasterName names its pod's host <job>-master-0.
func MasterHostname(job string) string { return MasterName(job) + "-0" }

// WorkersName is the workload (an Indexed Job or a StatefulSet) that runs
// the workers.
func WorkersName(job string) string { return job + "-worker" }

// WorkerHostname is the hostname of worker i; an Indexed Job names its
// pods' hosts <job name>-<index>, and a StatefulSet its pods.
func WorkerHostname(job string, i int) string { return WorkersName(job) + "-" + strconv.Itoa(i) }

// DNSName is how other pods of the job reach a pod: its hostname under the
// job's headless Service. It holds neither namespace nor cluster domain,
// which the pods' DNS search path supplies, so output applies to any
// namespace.
func DNSName(job, hostname string) string { return hostname + "." + ServiceName(job) }

// WorkerHostParts splits worker hosts around their index: worker i's host,
// DNSName(job, WorkerHostname(job, i)), is prefix + i + suffix. A script
// can then name every worker from their count.
func WorkerHostParts(job string) (prefix, suffix string) {
	return WorkersName(job) + "-", DNSName(job, "")
}

// maxGeneratedName is the longest name part the Job controller gives a pod
// before the API server appends its 5 random characters
// (k8s.io/apiserver's names.MaxGeneratedNameLength, 63 - 5).
const maxGeneratedName = 58

// generatedSuffix matches the 5 characters the API server appends to a
// generated name (k8s.io/apimachinery's names.SimpleNameGenerator, from
// utilrand's alphabet).
const generatedSuffix = "[bcdfghjklmnpqrstvwxz2456789]{5}"

// IndexedPodNames is a regular expression (RE2, anchored) that the name of
// every pod of the Indexed Jobs jobs matches, each Job's indexes below
// completions, and as few other names as it can: the Job controller names
// index i's pods <Job>-<i>-<5 random characters>, and when <Job>-<i>- is
// longer than 58 characters keeps <i>- whole and cuts the Job's name
// short. An index of d digits is matched as any d digits.
func IndexedPodNames(completions int, jobs ...string) string {
	digits := len(strconv.Itoa(max(completions-1, 0)))
	var alternatives []string
	for _, job := range jobs {
		for d := 1; d <= digits; d++ {
			base := job
			if index := d + 2; len(base)+index > maxGeneratedName {
				base = base[:maxGeneratedName-index]
			}
			alternatives = append(alternatives, regexp.QuoteMeta(base)+"-[0-9]{"+strconv.Itoa(d)+"}-")
		}
	}
	slices.Sort(alternatives)
	return "^(" + strings.Join(slices.Compact(alternatives), "|") + ")" + generatedSuffix + "$"
}
