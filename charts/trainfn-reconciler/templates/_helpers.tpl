{{/*
The chart's name, and the full name every object is named after: the
release name alone when it already says trainfn-reconciler, so that
`helm install trainfn-reconciler` names things trainfn-reconciler. Both fit
a DNS label (63 characters).
*/}}
{{- define "trainfn-reconciler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "trainfn-reconciler.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The metrics Service's name: a Service name is a DNS label too, so the full
name is shortened to leave room for the suffix.
*/}}
{{- define "trainfn-reconciler.metricsServiceName" -}}
{{- printf "%s-metrics" (include "trainfn-reconciler.fullname" . | trunc 55 | trimSuffix "-") }}
{{- end }}

{{/*
The DI server's Service: the host of the DI_SERVER_URL trainfn renders
into DIJobs, trainfn-reconciler-di-server.trainfn-system, when the release
is trainfn-reconciler in trainfn-system.
*/}}
{{- define "trainfn-reconciler.diServerServiceName" -}}
{{- printf "%s-di-server" (include "trainfn-reconciler.fullname" . | trunc 53 | trimSuffix "-") }}
{{- end }}

{{/*
The Lease the replicas elect a leader with, one per release, so that two
releases in one namespace (each watching its own namespaces) do not take
turns reconciling each other's jobs.
*/}}
{{- define "trainfn-reconciler.leaseName" -}}
{{- include "trainfn-reconciler.fullname" . }}
{{- end }}

{{/*
The reconciler's user name, as the API server authenticates its
ServiceAccount's token: what the admission policy applies to.
*/}}
{{- define "trainfn-reconciler.userName" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "trainfn-reconciler.serviceAccountName" . }}
{{- end }}

{{- define "trainfn-reconciler.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "trainfn-reconciler.labels" -}}
helm.sh/chart: {{ include "trainfn-reconciler.chart" . }}
{{ include "trainfn-reconciler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: reconciler
app.kubernetes.io/part-of: trainfn
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels never change across upgrades: a Deployment's selector is
immutable.
*/}}
{{- define "trainfn-reconciler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trainfn-reconciler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The ServiceAccount the reconciler runs as, and that every role is bound to.
*/}}
{{- define "trainfn-reconciler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "trainfn-reconciler.fullname" .) .Values.serviceAccount.name }}
{{- else if .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else }}
{{- fail "serviceAccount.name is required when serviceAccount.create is false: the chart binds the reconciler's roles to that ServiceAccount, and binding them to the namespace's default one would hand them to every pod that names none" }}
{{- end }}
{{- end }}

{{/*
Combinations of values the schema cannot refuse, refused with the reason.
*/}}
{{- define "trainfn-reconciler.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail (printf "replicaCount is %d but leaderElection.enabled is false: without leader election every replica reconciles, and they undo each other's writes. Set leaderElection.enabled=true, or replicaCount=1" (int .Values.replicaCount)) }}
{{- end }}
{{- if and .Values.metrics.enabled (eq (int .Values.metrics.port) (int .Values.health.port)) }}
{{- fail (printf "metrics.port and health.port are both %d: the reconciler serves metrics and health probes on separate ports" (int .Values.health.port)) }}
{{- end }}
{{- if eq (include "trainfn-reconciler.diServerOn" .) "true" }}
{{- if and .Values.metrics.enabled (eq (int .Values.diServer.port) (int .Values.metrics.port)) }}
{{- fail (printf "diServer.port and metrics.port are both %d: the reconciler serves the DI server API and metrics on separate ports" (int .Values.metrics.port)) }}
{{- end }}
{{- if eq (int .Values.diServer.port) (int .Values.health.port) }}
{{- fail (printf "diServer.port and health.port are both %d: the reconciler serves the DI server API and health probes on separate ports" (int .Values.health.port)) }}
{{- end }}
{{- end }}
{{- if eq (include "trainfn-reconciler.progressOn" .) "true" }}
{{- $taken := dict (toString (int .Values.health.port)) "health.port" }}
{{- if .Values.metrics.enabled }}{{ $_ := set $taken (toString (int .Values.metrics.port)) "metrics.port" }}{{ end }}
{{- if eq (include "trainfn-reconciler.diServerOn" .) "true" }}{{ $_ := set $taken (toString (int .Values.diServer.port)) "diServer.port" }}{{ end }}
{{- with get $taken (toString (int .Values.progress.port)) }}
{{- fail (printf "progress.port and %s are both %d: the reconciler serves each on a port of its own" . (int $.Values.progress.port)) }}
{{- end }}
{{- end }}
{{- if and (eq (include "trainfn-reconciler.allocatorOn" .) "true") (regexMatch "^(0|([0.]+(ns|us|µs|ms|s|m|h))+)$" (toString .Values.allocator.schedulingPeriod)) }}
{{- fail (printf "allocator.schedulingPeriod is %s with allocator.enabled: a period of zero runs no allocator, though the chart would let it read every Node. Set allocator.enabled=false to run none, or a period above zero" (toString .Values.allocator.schedulingPeriod)) }}
{{- end }}
{{- end }}

{{/*
Whether the DI server and the allocator run: DIJobs' two, with
diJobs.enabled only, each unless turned off; "true" or "".
*/}}
{{- define "trainfn-reconciler.diServerOn" -}}
{{- if and .Values.diJobs.enabled .Values.diServer.enabled }}true{{ end }}
{{- end }}

{{- define "trainfn-reconciler.tokenReviewOn" -}}
{{- if and (eq (include "trainfn-reconciler.diServerOn" .) "true") .Values.diServer.tokenReview }}true{{ end }}
{{- end }}

{{- define "trainfn-reconciler.progressOn" -}}
{{- if .Values.progress.enabled }}true{{ end }}
{{- end }}

{{/*
Whether the reconciler creates TokenReviews: the progress server always,
the DI server with tokenReview; "true" or "".
*/}}
{{- define "trainfn-reconciler.reviewsOn" -}}
{{- if or (eq (include "trainfn-reconciler.progressOn" .) "true") (eq (include "trainfn-reconciler.tokenReviewOn" .) "true") }}true{{ end }}
{{- end }}

{{/*
The progress server's Service is the release's full name, so that the
release trainfn-reconciler in trainfn-system is
trainfn-reconciler.trainfn-system.svc, the host trainfn renders into
progress jobs; its TLS Secret is named after it.
*/}}
{{- define "trainfn-reconciler.progressServiceName" -}}
{{- include "trainfn-reconciler.fullname" . }}
{{- end }}

{{- define "trainfn-reconciler.progressSecretName" -}}
{{- printf "%s-progress-tls" (include "trainfn-reconciler.fullname" . | trunc 49 | trimSuffix "-") }}
{{- end }}

{{/*
The names the progress server's certificate is for: its Service's, as
pods of every namespace may spell it.
*/}}
{{- define "trainfn-reconciler.progressDNSNames" -}}
{{- $s := include "trainfn-reconciler.progressServiceName" . }}
{{- $ns := .Release.Namespace }}
{{- join "," (list $s (printf "%s.%s" $s $ns) (printf "%s.%s.svc" $s $ns) (printf "%s.%s.svc.cluster.local" $s $ns)) }}
{{- end }}

{{- define "trainfn-reconciler.allocatorOn" -}}
{{- if and .Values.diJobs.enabled .Values.allocator.enabled }}true{{ end }}
{{- end }}

{{/*
What the reconciler may do in the namespaces it watches, each rule the
union of what its concerns' code declares (the Rules of each package of
reconciler/; docs/reconciler.md lists which code uses which right). The
admission policy (admission-policy.yaml) confines every write to trainfn's
objects and the fields the reconciler owns, which RBAC cannot select.
*/}}
{{- define "trainfn-reconciler.rules" -}}
# The label-filtered cache lists and watches the objects trainfn renders
# (observed); patch: the launcher's discovered-hosts annotation
# (discovery), a gated pod's gates and node (gates); delete: finished
# workers (cleanup), a preemptible worker stuck on its node (allocation).
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch, patch, delete]
# The discover_hosts.sh key of an elastic MPIJob's <job>-config (discovery),
# the ca.crt key of a progress job's <job>-progress-ca (progress).
- apiGroups: [""]
  resources: [configmaps]
  verbs: [list, watch, patch]
# patch: the worker count and the run's marks (scaling), replicas 0 at the
# end (cleanup), a job's phase (jobphase), a DIJob's profilings and worker
# count (the DI server), the allocator's count and nodes, a job's last
# progress report (progress); get, with DIJobs: the
# allocation recorded, read live before a gated pod is pinned (gates), a
# StatefulSet read again after a write lost a race (the DI server).
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [list, watch, patch{{ if or (eq (include "trainfn-reconciler.diServerOn" .) "true") (eq (include "trainfn-reconciler.allocatorOn" .) "true") }}, get{{ end }}]
# patch: suspend or resize the workers' Job at the end and mark it ended
# (cleanup), an elastic Job's parallelism under Kueue (scaling), a job's
# phase (jobphase), a DIJob's profilings (the DI server), a job's last
# progress report (progress); get: a Job read again
# after the DI server's write of its profilings lost a race.
- apiGroups: [batch]
  resources: [jobs]
  verbs: [list, watch, patch{{ if eq (include "trainfn-reconciler.diServerOn" .) "true" }}, get{{ end }}]
# <job>-ssh or <job>-mpi-ssh-auth, when the user supplied none
# (sshsecret): create only, never read, list, update or delete.
- apiGroups: [""]
  resources: [secrets]
  verbs: [create]
# What it did, on the job's objects.
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end }}

{{/*
The reconciler's command line, the image's entrypoint being
trainfn-reconciler; every flag is given, so the chart, not the binary's
defaults, says how it runs.
*/}}
{{- define "trainfn-reconciler.args" -}}
{{- with .Values.watchNamespaces -}}
- --namespaces={{ join "," . }}
{{ end -}}
- --leader-elect={{ .Values.leaderElection.enabled }}
{{- if .Values.leaderElection.enabled }}
- --leader-election-id={{ include "trainfn-reconciler.leaseName" . }}
{{- end }}
{{- if .Values.metrics.enabled }}
- --metrics-bind-address=:{{ int .Values.metrics.port }}
{{- else }}
- --metrics-bind-address=0
{{- end }}
- --health-probe-bind-address=:{{ int .Values.health.port }}
{{- if eq (include "trainfn-reconciler.diServerOn" .) "true" }}
- --di-server-bind-address=:{{ int .Values.diServer.port }}
- --di-server-write-rate={{ .Values.diServer.writeRate }}
- --di-server-write-burst={{ int .Values.diServer.writeBurst }}
- --di-server-token-review={{ .Values.diServer.tokenReview }}
{{- else }}
- --di-server-bind-address=0
{{- end }}
{{- if eq (include "trainfn-reconciler.progressOn" .) "true" }}
- --progress-address=:{{ int .Values.progress.port }}
- --progress-tls-secret={{ include "trainfn-reconciler.progressSecretName" . }}
- --progress-tls-secret-namespace={{ .Release.Namespace }}
- --progress-dns-names={{ include "trainfn-reconciler.progressDNSNames" . }}
{{- else }}
- --progress-address=0
{{- end }}
- --coalesce={{ .Values.coalesce }}
{{- if eq (include "trainfn-reconciler.allocatorOn" .) "true" }}
- --scheduling-period={{ .Values.allocator.schedulingPeriod }}
{{- else }}
- --scheduling-period=0
{{- end }}
- --log-level={{ .Values.logLevel }}
{{- end }}
