{{/* Names and labels shared by every template. */}}

{{- define "webhook-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The object name prefix: the release name, plus the chart name unless the release name has it. */}}
{{- define "webhook-operator.fullname" -}}
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

{{- define "webhook-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "webhook-operator.labels" -}}
helm.sh/chart: {{ include "webhook-operator.chart" . }}
{{ include "webhook-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: webhook-operator
{{- end }}

{{- define "webhook-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "webhook-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "webhook-operator.postgresName" -}}
{{- printf "%s-postgres" (include "webhook-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
"true" when the bundled Postgres keeps its data on a PersistentVolumeClaim: postgres.persistence.enabled,
unless no StorageClass is named and the cluster has none marked default, where the claim would stay
Pending forever (a plain kubeadm cluster): then an emptyDir, and NOTES says so. An installed
StatefulSet keeps what it has (its claims cannot change); helm template, which sees no cluster,
renders the claim.
*/}}
{{- define "webhook-operator.postgresPersistent" -}}
{{- $persistence := .Values.postgres.persistence -}}
{{- $installed := lookup "apps/v1" "StatefulSet" .Release.Namespace (include "webhook-operator.postgresName" .) -}}
{{- $classes := lookup "storage.k8s.io/v1" "StorageClass" "" "" -}}
{{- if or (not $persistence.enabled) $persistence.storageClass -}}
{{ $persistence.enabled }}
{{- else if $installed -}}
{{ not (empty $installed.spec.volumeClaimTemplates) }}
{{- else if not $classes -}}
true
{{- else -}}
{{- $default := false -}}
{{- range $classes.items -}}
{{- if eq (get (.metadata.annotations | default dict) "storageclass.kubernetes.io/is-default-class") "true" -}}
{{- $default = true -}}
{{- end -}}
{{- end -}}
{{ $default }}
{{- end -}}
{{- end }}

{{- define "webhook-operator.postgresSelectorLabels" -}}
app.kubernetes.io/name: {{ include "webhook-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: database
{{- end }}

{{- define "webhook-operator.postgresLabels" -}}
helm.sh/chart: {{ include "webhook-operator.chart" . }}
{{ include "webhook-operator.postgresSelectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: webhook-operator
{{- end }}

{{- define "webhook-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "webhook-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* repository@digest when a digest is given (the tag is then only informative), else repository:tag. */}}
{{- define "webhook-operator.imageReference" -}}
{{- if .digest }}{{ printf "%s@%s" .repository .digest }}{{ else }}{{ printf "%s:%s" .repository .tag }}{{ end }}
{{- end }}

{{- define "webhook-operator.image" -}}
{{- include "webhook-operator.imageReference" (dict "repository" .Values.image.repository "tag" (default .Chart.AppVersion .Values.image.tag) "digest" .Values.image.digest) }}
{{- end }}

{{- define "webhook-operator.postgresImage" -}}
{{- include "webhook-operator.imageReference" .Values.postgres.image }}
{{- end }}

{{- define "webhook-operator.leaseName" -}}
{{- default (printf "%s-leader" (include "webhook-operator.fullname" .)) .Values.config.leaderElection.leaseName }}
{{- end }}

{{- define "webhook-operator.apiKeySecretName" -}}
{{- default (printf "%s-api-key" (include "webhook-operator.fullname" .)) .Values.apiKey.existingSecret }}
{{- end }}

{{/* Generated Secrets use fixed keys; existing ones say which key holds the value. */}}
{{- define "webhook-operator.apiKeySecretKey" -}}
{{- if .Values.apiKey.existingSecret }}{{ .Values.apiKey.existingSecretKey }}{{ else }}api-key{{ end }}
{{- end }}

{{- define "webhook-operator.metricsTokenSecretName" -}}
{{- default (printf "%s-metrics-token" (include "webhook-operator.fullname" .)) .Values.metrics.token.existingSecret }}
{{- end }}

{{- define "webhook-operator.metricsTokenSecretKey" -}}
{{- if .Values.metrics.token.existingSecret }}{{ .Values.metrics.token.existingSecretKey }}{{ else }}token{{ end }}
{{- end }}

{{- define "webhook-operator.secretKeysSecretName" -}}
{{- default (printf "%s-secret-keys" (include "webhook-operator.fullname" .)) .Values.secretEncryption.existingSecret }}
{{- end }}

{{- define "webhook-operator.secretKeysSecretKey" -}}
{{- if .Values.secretEncryption.existingSecret }}{{ .Values.secretEncryption.existingSecretKey }}{{ else }}keys{{ end }}
{{- end }}

{{- define "webhook-operator.postgresSecretKey" -}}
{{- if .Values.postgres.auth.existingSecret }}{{ .Values.postgres.auth.existingSecretKey }}{{ else }}password{{ end }}
{{- end }}

{{/* The operator's URL of the bundled Postgres, with the given password (letters and digits only). */}}
{{- define "webhook-operator.bundledDatabaseUrl" -}}
{{- $ := .context }}
{{- printf "postgres://%s:%s@%s:5432/%s" $.Values.postgres.username .password (include "webhook-operator.postgresName" $) $.Values.postgres.database }}
{{- end }}

{{/* The Secret and key holding the operator's DATABASE_URL, mounted as DATABASE_URL_FILE. */}}
{{- define "webhook-operator.databaseUrlSecretName" -}}
{{- if .Values.postgres.enabled }}{{ include "webhook-operator.postgresSecretName" . }}{{ else }}{{ .Values.database.existingSecret.name }}{{ end }}
{{- end }}

{{- define "webhook-operator.databaseUrlSecretKey" -}}
{{- if not .Values.postgres.enabled }}{{ .Values.database.existingSecret.key }}
{{- else if .Values.postgres.auth.existingSecret }}{{ .Values.postgres.auth.existingSecretUrlKey }}
{{- else }}database-url{{ end }}
{{- end }}

{{- define "webhook-operator.postgresSecretName" -}}
{{- default (include "webhook-operator.postgresName" .) .Values.postgres.auth.existingSecret }}
{{- end }}

{{/*
A value kept across upgrades: the existing Secret's value when the release already has one (lookup
finds it on a live cluster), else a new random one. `helm template` and `--dry-run` cannot look up, so
they render a new random value each time.
*/}}
{{- define "webhook-operator.keptSecretValue" -}}
{{- $existing := lookup "v1" "Secret" .namespace .name }}
{{- if and $existing (hasKey (default dict $existing.data) .key) }}
{{- index $existing.data .key }}
{{- else }}
{{- .generate | b64enc }}
{{- end }}
{{- end }}

{{/* An environment variable from a whole number (values are floats to Helm: 1e+06 would be wrong). */}}
{{- define "webhook-operator.intEnv" -}}
- name: {{ .name }}
  value: {{ .value | int64 | toString | quote }}
{{- end }}

{{/* The Secret of the aggregated API's serving certificate (generated by the chart, or cert-manager's). */}}
{{- define "webhook-operator.aggregatedApiSecretName" -}}
{{- printf "%s-aggregated-api-tls" (include "webhook-operator.fullname" .) }}
{{- end }}
