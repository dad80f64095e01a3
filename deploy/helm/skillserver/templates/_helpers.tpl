{{/*
The chart's name, or nameOverride.
*/}}
{{- define "skillserver.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The objects' name: fullnameOverride, else the release name when it holds
the chart's name, else <release>-<chart>.
*/}}
{{- define "skillserver.fullname" -}}
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
Labels every object carries.
*/}}
{{- define "skillserver.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "skillserver.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Labels selecting the pods. app.kubernetes.io/name is what the pod
discovery job of deploy/prometheus.yml keeps.
*/}}
{{- define "skillserver.selectorLabels" -}}
app.kubernetes.io/name: {{ include "skillserver.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The Secret holding the read tokens file, or "" for a public feed.
*/}}
{{- define "skillserver.readTokensSecret" -}}
{{- if .Values.readTokens.existingSecret }}
{{- .Values.readTokens.existingSecret }}
{{- else if .Values.readTokens.lines }}
{{- printf "%s-read-tokens" (include "skillserver.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The Secret's key holding the read tokens file.
*/}}
{{- define "skillserver.readTokensKey" -}}
{{- if .Values.readTokens.existingSecret }}
{{- .Values.readTokens.existingSecretKey }}
{{- else }}
{{- "tokens" }}
{{- end }}
{{- end }}

{{/*
The Secret holding the admin token, or "" when POST /-/reload is off.
*/}}
{{- define "skillserver.adminSecret" -}}
{{- if .Values.adminToken.existingSecret }}
{{- .Values.adminToken.existingSecret }}
{{- else if .Values.adminToken.value }}
{{- printf "%s-admin" (include "skillserver.fullname" .) }}
{{- end }}
{{- end }}

{{/*
The Secret's key holding the admin token.
*/}}
{{- define "skillserver.adminKey" -}}
{{- if .Values.adminToken.existingSecret }}
{{- .Values.adminToken.existingSecretKey }}
{{- else }}
{{- "token" }}
{{- end }}
{{- end }}

{{/*
git-sync's flags shared by the init container and the sidecar.
*/}}
{{- define "skillserver.gitSyncArgs" -}}
- --repo={{ required "git.repo is required: the URL of the skills repository (--set git.repo=...)" .Values.git.repo }}
- --ref={{ .Values.git.ref }}
- --root=/git
- --link=current
- --depth={{ .Values.git.depth }}
{{- range .Values.git.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end }}

{{/*
The config file skillserver reads.
*/}}
{{- define "skillserver.configFile" -}}
{{- if .Values.config }}
{{- toYaml .Values.config }}
{{- else }}
{}
{{- end }}
{{- end }}
