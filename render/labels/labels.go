// Package labels holds the labels rendered objects carry. The keys are the
// operators' own, so selectors users already have keep matching.
package labels

const (
	// JobName names the job an object belongs to.
	JobName = "training.kubeflow.org/job-name"
	// JobRole is launcher, master or worker.
	JobRole = "training.kubeflow.org/job-role"
	// OperatorName tells trainfn's objects from an operator's.
	OperatorName = "training.kubeflow.org/operator-name"

	// CompletionIndex is the label the Job controller puts on each pod of
	// an Indexed Job: its index.
	CompletionIndex = "batch.kubernetes.io/job-completion-index"

	// StatefulSetPodName is the label the StatefulSet controller puts on
	// each of its pods: the pod's name, which is also its hostname.
	StatefulSetPodName = "statefulset.kubernetes.io/pod-name"
	// StatefulSetPodIndex is the label the StatefulSet controller puts on
	// each of its pods: the pod's ordinal.
	StatefulSetPodIndex = "apps.kubernetes.io/pod-index"
	// Operator is the value of OperatorName on everything trainfn renders.
	Operator = "trainfn"

	RoleLauncher = "launcher"
	RoleMaster   = "master"
	RoleWorker   = "worker"
)

// Job selects every pod of a job.
func Job(job string) map[string]string {
	return map[string]string{JobName: job, OperatorName: Operator}
}

// Role selects the pods of one role of a job.
func Role(job, role string) map[string]string {
	m := Job(job)
	m[JobRole] = role
	return m
}
