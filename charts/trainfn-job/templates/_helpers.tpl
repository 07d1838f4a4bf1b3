{{/*
Helm's standard labels. trainfn carries the job's labels onto every object
and pod it renders, so `kubectl get all -l app.kubernetes.io/instance=<release>`
finds the whole job. helm.sh/chart is left out: on the pod templates, a new
chart version would change an unchanged job, whose Jobs Helm cannot update.
*/}}
{{- define "trainfn-job.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
The job document: the job value, or the chart's example when it is empty.
*/}}
{{- define "trainfn-job.job" -}}
{{- if .Values.job }}
{{- toYaml .Values.job }}
{{- else }}
{{- .Files.Get "files/example-job.yaml" }}
{{- end }}
{{- end }}

{{/*
The job's name: its own, else the release's.
*/}}
{{- define "trainfn-job.name" -}}
{{- $job := include "trainfn-job.job" . | fromYaml }}
{{- ($job.metadata | default dict).name | default .Release.Name }}
{{- end }}
