{{/*
Rules between values that values.schema.json cannot state with a clear message. Included by
deployment.yaml, so `helm install`, `helm upgrade` and `helm template` stop here with the reason.
*/}}
{{- define "webhook-operator.validate" -}}
{{- if and (not .Values.postgres.enabled) (not .Values.database.existingSecret.name) }}
{{- fail "\n\nNo database: postgres.enabled is false, so set database.existingSecret.name to a Secret whose key database.existingSecret.key (default database-url) holds the full DATABASE_URL (postgres://user:password@host:5432/db)." }}
{{- end }}
{{- if and .Values.postgres.enabled .Values.database.existingSecret.name }}
{{- fail "\n\nTwo databases: database.existingSecret.name is set and postgres.enabled is true. Set postgres.enabled=false to use the existing database, or leave database.existingSecret.name empty for the bundled Postgres." }}
{{- end }}
{{- if and (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) }}
{{- fail "\n\nserviceAccount.create is false, so serviceAccount.name must name an existing ServiceAccount." }}
{{- end }}
{{- if and .Values.rbac.create .Values.rbac.secretNamespaces }}
{{- range .Values.config.webhookSecretsWithoutLabel }}
{{- $namespace := first (splitList "/" .) }}
{{- if and (ne . "*") (not (has $namespace $.Values.rbac.secretNamespaces)) }}
{{- fail (printf "\n\nconfig.webhookSecretsWithoutLabel lists %s, but rbac.secretNamespaces does not list %s, so the operator may not read Secrets there. Add %s to rbac.secretNamespaces, or remove the entry." . $namespace $namespace) }}
{{- end }}
{{- end }}
{{- end }}
{{- if ge (add (int64 .Values.config.shutdownTimeoutMs) (mul (int64 .Values.shutdownDelaySeconds) 1000)) (mul (int64 .Values.terminationGracePeriodSeconds) 1000) }}
{{- fail (printf "\n\nconfig.shutdownTimeoutMs (%v ms) plus shutdownDelaySeconds (%v s) must be below terminationGracePeriodSeconds (%v s), or Kubernetes kills replicas before in-flight deliveries finish." (int64 .Values.config.shutdownTimeoutMs) (int64 .Values.shutdownDelaySeconds) (int64 .Values.terminationGracePeriodSeconds)) }}
{{- end }}
{{- end }}
