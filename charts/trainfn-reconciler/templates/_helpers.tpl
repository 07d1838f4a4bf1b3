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
{{- if .Values.diServer.enabled }}
{{- if and .Values.metrics.enabled (eq (int .Values.diServer.port) (int .Values.metrics.port)) }}
{{- fail (printf "diServer.port and metrics.port are both %d: the reconciler serves the DI server API and metrics on separate ports" (int .Values.metrics.port)) }}
{{- end }}
{{- if eq (int .Values.diServer.port) (int .Values.health.port) }}
{{- fail (printf "diServer.port and health.port are both %d: the reconciler serves the DI server API and health probes on separate ports" (int .Values.health.port)) }}
{{- end }}
{{- end }}
{{- if and .Values.allocator.enabled (regexMatch "^(0|([0.]+(ns|us|µs|ms|s|m|h))+)$" (toString .Values.allocator.schedulingPeriod)) }}
{{- fail (printf "allocator.schedulingPeriod is %s with allocator.enabled: a period of zero runs no allocator, though the chart would let it read every Node. Set allocator.enabled=false to run none, or a period above zero" (toString .Values.allocator.schedulingPeriod)) }}
{{- end }}
{{- end }}

{{/*
What the reconciler may do in the namespaces it watches, one rule per row
of the README's table, in its order. Secrets: get and create only, so it
can neither read every Secret nor change one the user supplied.
*/}}
{{- define "trainfn-reconciler.rules" -}}
# Which workers run and are ready, which launcher or worker exited, and
# what every pod requests of its node (the allocator); patch annotates the
# launcher pod so the kubelet refreshes its ConfigMap volume at once, and
# lifts a preemptible DIJob worker's scheduling gate; delete removes
# finished workers (cleanPodPolicy All).
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, patch, delete]
# The discover_hosts.sh key of an elastic job's <job>-config.
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list, watch, patch]
# An elastic job's worker replicas, kept within [min, max], 0 at its end;
# the allocator's counts and placements of preemptible DIJobs; a DIJob's
# phase and profilings annotations.
- apiGroups: [apps]
  resources: [statefulsets]
  verbs: [get, list, watch, patch]
{{- if .Values.diServer.enabled }}
# The DI server API's POST and DELETE .../replicas: a preemptible DIJob's
# worker count, written through the scale subresource on condition that
# the StatefulSet read just before is unchanged.
- apiGroups: [apps]
  resources: [statefulsets/scale]
  verbs: [update]
{{- end }}
# When a launcher or master ends; suspending a worker Job stops its pods;
# a DIJob's phase and profilings annotations.
- apiGroups: [batch]
  resources: [jobs]
  verbs: [get, list, watch, patch]
# <job>-ssh, when the user supplied none.
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create]
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
{{- if .Values.diServer.enabled }}
- --di-server-bind-address=:{{ int .Values.diServer.port }}
{{- else }}
- --di-server-bind-address=0
{{- end }}
- --coalesce={{ .Values.coalesce }}
{{- if .Values.allocator.enabled }}
- --scheduling-period={{ .Values.allocator.schedulingPeriod }}
{{- else }}
- --scheduling-period=0
{{- end }}
- --log-level={{ .Values.logLevel }}
{{- end }}
