{{/* The chart's name, truncated to 63 characters (a DNS label). */}}
{{- define "shipgraph.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* release-chart, or the release alone when it already holds the chart's name. */}}
{{- define "shipgraph.fullname" -}}
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

{{- define "shipgraph.selectorLabels" -}}
app.kubernetes.io/name: {{ include "shipgraph.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "shipgraph.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "shipgraph.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "shipgraph.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "shipgraph.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "shipgraph.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret the pods read: the existing one, or the chart's. */}}
{{- define "shipgraph.secretName" -}}
{{- default (include "shipgraph.fullname" .) .Values.existingSecret }}
{{- end }}

{{/* The settings of the ConfigMap: config plus what the chart derives. */}}
{{- define "shipgraph.configData" -}}
{{- range $k, $v := .Values.config }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
ADDR: {{ printf "0.0.0.0:%d" (int .Values.containerPort) | quote }}
DATA_DIR: "/data"
SHUTDOWN_DELAY: {{ printf "%ds" (int .Values.shutdown.delaySeconds) | quote }}
SHUTDOWN_TIMEOUT: {{ printf "%ds" (int .Values.shutdown.timeoutSeconds) | quote }}
{{- end }}

{{/* The Secret's data: secrets, and a FILE_URL_SECRET shared by every
replica, kept from the live Secret over upgrades. */}}
{{- define "shipgraph.secretData" -}}
{{- $live := lookup "v1" "Secret" .Release.Namespace (include "shipgraph.fullname" .) }}
{{- range $k, $v := .Values.secrets }}
{{ $k }}: {{ $v | toString | b64enc | quote }}
{{- end }}
{{- if and .Values.generateFileURLSecret (not (hasKey .Values.secrets "FILE_URL_SECRET")) }}
{{- if and $live $live.data (hasKey $live.data "FILE_URL_SECRET") }}
FILE_URL_SECRET: {{ index $live.data "FILE_URL_SECRET" | quote }}
{{- else }}
FILE_URL_SECRET: {{ randAlphaNum 48 | b64enc | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* GOMEMLIMIT in MiB: memory.limitPercent of resources.limits.memory
(Mi or Gi), so the collector works harder before the kernel kills the pod. */}}
{{- define "shipgraph.gomemlimit" -}}
{{- $lim := "" }}
{{- with .Values.resources }}{{ with .limits }}{{ $lim = .memory | default "" | toString }}{{ end }}{{ end }}
{{- if and $lim (gt (int .Values.memory.limitPercent) 0) }}
{{- $mib := 0 }}
{{- if hasSuffix "Gi" $lim }}
{{- $mib = mul (trimSuffix "Gi" $lim | int) 1024 }}
{{- else if hasSuffix "Mi" $lim }}
{{- $mib = trimSuffix "Mi" $lim | int }}
{{- else }}
{{- fail (printf "resources.limits.memory %q: use Mi or Gi (it sets GOMEMLIMIT)" $lim) }}
{{- end }}
{{- printf "%dMiB" (div (mul $mib (int .Values.memory.limitPercent)) 100) }}
{{- end }}
{{- end }}

{{- define "shipgraph.terminationGrace" -}}
{{- if .Values.terminationGracePeriodSeconds }}
{{- .Values.terminationGracePeriodSeconds }}
{{- else }}
{{- add (int .Values.shutdown.preStopSeconds) (int .Values.shutdown.delaySeconds) (int .Values.shutdown.timeoutSeconds) 5 }}
{{- end }}
{{- end }}
