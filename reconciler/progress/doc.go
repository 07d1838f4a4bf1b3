// Package progress serves Kubeflow Trainer's progress API (KEP-2779) for
// the jobs trainfn renders, so that a trainer that reports its progress
// the way Trainer's do (Kubeflow's SDK update_trainjob_status, the
// transformers KubeflowCallback) runs unchanged: it posts
// {"trainerStatus": {...}} to KUBEFLOW_TRAINER_SERVER_URL, over TLS it
// checks with KUBEFLOW_TRAINER_SERVER_CA_CERT, with the token at
// KUBEFLOW_TRAINER_SERVER_TOKEN.
//
// No job object exists in the cluster to carry the report: the last one is
// the annotation handoff.TrainerStatus of the job's first workload
// (written at most once per WriteInterval per job) and Prometheus gauges.
//
// A caller must present a service account token for Audience bound to a
// pod (a projected token is) that is, by its UID, a live pod of the job
// the path names, in the label-filtered cache. Reviews of tokens are
// cached (ReviewCacheTTL); reports are bounded in size (MaxBody) and rate
// per job (JobRate, JobBurst). Errors are metav1.Status bodies, as
// Trainer's server answers them.
//
// The TLS material is a CA and a serving certificate of the reconciler's
// own (package servingcert), in a Secret its replicas share; CAFiller
// copies the CA's certificate into each job's CA ConfigMap, which the
// job's pods mount.
package progress
