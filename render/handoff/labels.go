package handoff

// Labels on rendered objects. The keys are the operators' own, so that
// selectors users already have keep matching; the reconciler and trainfn
// status find a job's objects by them.
const (
	// JobNameLabel names the job an object belongs to.
	JobNameLabel = "training.kubeflow.org/job-name"
	// JobRoleLabel is launcher, master or worker: on trainfn's workloads,
	// the role of their pods. On pods it is what the job's operator set,
	// which for training-operator's MPIJob launcher is master.
	JobRoleLabel = "training.kubeflow.org/job-role"
	// ReplicaTypeLabel is the replica type of a pod, in lower case
	// (launcher, master or worker), as training-operator labels the pods of
	// its kinds.
	ReplicaTypeLabel = "training.kubeflow.org/replica-type"
	// ReplicaIndexLabel is a pod's index among the pods of its replica
	// type, where a workload runs one pod, or one pod of a template; the
	// pods of an Indexed Job carry the Job controller's completion index
	// instead, and those of a StatefulSet its pod index.
	ReplicaIndexLabel = "training.kubeflow.org/replica-index"
	// OperatorNameLabel tells trainfn's objects from an operator's: its
	// value on everything trainfn renders is Operator.
	OperatorNameLabel = "training.kubeflow.org/operator-name"
	// Operator is the value of OperatorNameLabel on everything trainfn
	// renders.
	Operator = "trainfn"

	// KindLabel, on every workload (Job or StatefulSet) a job renders
	// into and on its pods, is the kind of the job spec it was rendered
	// from, as the spec's kind field names it (MPIJob, PyTorchJob, DIJob):
	// no object in the cluster holds the spec, and the workloads' shapes do
	// not tell the kinds apart.
	KindLabel = "trainfn.dev/job-kind"
	// DigestLabel, on every pod template and on the selectors of the job's
	// Services, is the job's render digest: a digest of everything
	// rendered for it, so that a changed job replaces its pods together.
	DigestLabel = "trainfn.dev/render-digest"
)

// MPIJobKind is the KindLabel of an MPIJob's workloads, whose workers'
// Job, when it has a successPolicy, stops when its launcher tells it the
// job ended: the reconciler stops it only if it has not by a while after.
const MPIJobKind = "MPIJob"

// PyTorchJobKind is the KindLabel of a PyTorchJob's workloads and pods,
// which its Service of every pod selects: a TrainJob of the same name has
// pods of the same job name.
const PyTorchJobKind = "PyTorchJob"

// The roles of a job's pods, the values of JobRoleLabel.
const (
	RoleLauncher = "launcher"
	RoleMaster   = "master"
	RoleWorker   = "worker"
)

// PodRole is a pod's role in its job: its replica type where it has one,
// since its job-role is master for a training-operator MPIJob's launcher,
// else its job-role.
func PodRole(l map[string]string) string {
	if t, ok := l[ReplicaTypeLabel]; ok {
		return t
	}
	return l[JobRoleLabel]
}

// JobLabels select every object and pod of a job.
func JobLabels(job string) map[string]string {
	return map[string]string{JobNameLabel: job, OperatorNameLabel: Operator}
}

// RoleLabels select the workloads and pods of one role of a job.
func RoleLabels(job, role string) map[string]string {
	m := JobLabels(job)
	m[JobRoleLabel] = role
	return m
}
