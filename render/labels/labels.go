// Package labels holds the labels rendered objects carry. The keys are the
// operators' own, so selectors users already have keep matching.
package labels

const (
	// JobName names the job an object belongs to.
	JobName = "training.kubeflow.org/job-name"
	// JobRole is launcher, master or worker: on trainfn's workloads, the
	// role of their pods. On pods it is what the job's operator set, which
	// for training-operator's MPIJob launcher is master.
	JobRole = "training.kubeflow.org/job-role"
	// ReplicaType is the replica type of a pod, in lower case (launcher,
	// master or worker), as training-operator labels the pods of its kinds.
	ReplicaType = "training.kubeflow.org/replica-type"
	// ReplicaIndex is a pod's index among the pods of its replica type,
	// where a workload runs one pod, or one pod of a template; the pods of
	// an Indexed Job carry CompletionIndex instead, and those of a
	// StatefulSet StatefulSetPodIndex.
	ReplicaIndex = "training.kubeflow.org/replica-index"
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

// mpi-operator's labels of the pods of kubeflow.org/v1alpha1 and v1alpha2
// MPIJobs: the group, the job's name and the pod's role.
const (
	MPIGroupName = "group_name"
	MPIJobName   = "mpi_job_name"
	MPIRoleType  = "mpi_role_type"
)

// MPIv1alpha is what mpi-operator's v1alpha1 and v1alpha2 controllers
// labelled the pods of one role of a job with.
func MPIv1alpha(job, role string) map[string]string {
	return map[string]string{MPIGroupName: "kubeflow.org", MPIJobName: job, MPIRoleType: role}
}

// PodRole is a pod's role in its job: its replica type where it has one,
// since its job-role is master for a training-operator MPIJob's launcher,
// else its job-role.
func PodRole(l map[string]string) string {
	if t, ok := l[ReplicaType]; ok {
		return t
	}
	return l[JobRole]
}

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
