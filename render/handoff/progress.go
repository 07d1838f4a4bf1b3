package handoff

// Progress reporting: a job's pods report their training progress, in
// Kubeflow Trainer's format, to the reconciler's progress server. The render
// gives every pod the server's URL, a service account token of the audience
// below and the server's CA, from a ConfigMap it writes empty and the
// reconciler fills.
const (
	// Progress, "true" or "false" on a job spec, turns progress reporting
	// on or off for that job, over the function config's progress field.
	Progress = "trainfn.dev/progress"
	// ProgressCA, "true" on the ConfigMap ProgressCAName names, asks the
	// reconciler to write the progress server's CA into it, at
	// ProgressCAKey.
	ProgressCA = "trainfn.dev/progress-ca"
	// ProgressCAKey is the key of that ConfigMap, and the file in the pods,
	// that holds the CA.
	ProgressCAKey = "ca.crt"
	// ProgressAudience is the audience of the tokens the pods present to
	// the progress server, and no other server accepts.
	ProgressAudience = "trainfn.dev/progress"
)

// ProgressCAName is the ConfigMap holding the progress server's CA for the
// pods of a job of a kind: <job>-progress-ca. A PyTorchJob's is
// <job>-pytorch-progress-ca, as its Service is <job>-pytorch
// (PyTorchJobServiceName): the TrainJob it migrates to keeps its name, and
// the two may share a namespace while it does.
func ProgressCAName(kind, job string) string {
	if kind == PyTorchJobKind {
		return job + "-pytorch-progress-ca"
	}
	return job + "-progress-ca"
}
