package handoff

// Written by the reconciler, on a job's first workload (the one of
// FirstRank "0", else the first by name), read by `trainfn status`.
const (
	// TrainerStatus is the JSON of the last progress report a job's pods
	// sent, Kubeflow Trainer's trainerStatus object:
	// {"progressPercentage":45,"estimatedRemainingSeconds":795,
	// "metrics":[{"name":"loss","value":"0.23"}],
	// "lastUpdatedTime":"2026-01-02T03:04:05Z"}. No job object exists to
	// hold a TrainJob's status.trainerStatus, so the workload carries it.
	TrainerStatus = "trainfn.dev/trainer-status"
)
