{{/* The chart's name, or nameOverride. */}}
{{- define "kubesched.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Object names: the release name when it already contains the chart's name ("kubesched"). */}}
{{- define "kubesched.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubesched.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubesched.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubesched.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "kubesched.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: {{ .Values.mode }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "kubesched.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubesched.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The one HTTP port: metrics and probes (scheduler), or the verbs, metrics and probes (extender). */}}
{{- define "kubesched.port" -}}
{{- if eq .Values.mode "extender" -}}{{ .Values.extender.port }}{{- else -}}{{ .Values.metrics.port }}{{- end -}}
{{- end -}}

{{/* "true" when the pods talk to the API server (scheduler, or the watching extender); else empty. */}}
{{- define "kubesched.watchesCluster" -}}
{{- if or (eq .Values.mode "scheduler") .Values.extender.watchCluster -}}true{{- end -}}
{{- end -}}

{{- define "kubesched.portName" -}}
{{- if eq .Values.mode "extender" -}}http{{- else -}}metrics{{- end -}}
{{- end -}}

{{/* Fail early on values that would deploy something broken. */}}
{{- define "kubesched.validate" -}}
{{- if not (has .Values.mode (list "scheduler" "extender")) -}}
{{- fail (printf "mode: must be scheduler or extender, got %q" .Values.mode) -}}
{{- end -}}
{{- if not (has .Values.logFormat (list "text" "json")) -}}
{{- fail (printf "logFormat: must be text or json, got %q" .Values.logFormat) -}}
{{- end -}}
{{- if and (eq .Values.mode "scheduler") (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicas > 1 needs leaderElection.enabled: true (two schedulers would bind the same pods)" -}}
{{- end -}}
{{- $le := .Values.leaderElection -}}
{{- if and $le.enabled (not (and (gt (float64 $le.retryPeriodSeconds) 0.0) (lt (float64 $le.retryPeriodSeconds) (float64 $le.renewDeadlineSeconds)) (lt (float64 $le.renewDeadlineSeconds) (float64 $le.leaseDurationSeconds)))) -}}
{{- fail "leaderElection: need 0 < retryPeriodSeconds < renewDeadlineSeconds < leaseDurationSeconds" -}}
{{- end -}}
{{- if and .Values.metricsAuth.enabled (not .Values.tls.enabled) -}}
{{- fail "metricsAuth.enabled needs tls.enabled: a bearer token must not travel in clear text" -}}
{{- end -}}
{{- end -}}

{{/* The Lease's name: the scheduler's name (the first profile's schedulerName). */}}
{{- define "kubesched.leaseName" -}}
{{- if .Values.profiles -}}
{{- default "default-scheduler" (index .Values.profiles 0).schedulerName -}}
{{- else -}}
{{- .Values.schedulerName -}}
{{- end -}}
{{- end -}}

{{/* The KubeSchedulerConfiguration that kubesched loads from /etc/kubesched/config.yaml.
`kubesched run` reads leader election and QPS from here; the deployment's flags carry the same
values (a flag overrides its field). */}}
{{- define "kubesched.config" -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
{{- if eq .Values.mode "scheduler" }}
leaderElection:
  leaderElect: {{ .Values.leaderElection.enabled }}
  leaseDuration: {{ .Values.leaderElection.leaseDurationSeconds }}s
  renewDeadline: {{ .Values.leaderElection.renewDeadlineSeconds }}s
  retryPeriod: {{ .Values.leaderElection.retryPeriodSeconds }}s
  resourceLock: leases
  resourceName: {{ include "kubesched.leaseName" . }}
  resourceNamespace: {{ .Release.Namespace }}
clientConnection:
  qps: {{ .Values.kubeApi.qps }}
  burst: {{ .Values.kubeApi.burst }}
{{- else }}
leaderElection:
  leaderElect: false
{{- if .Values.extender.watchCluster }}
clientConnection:
  qps: {{ .Values.kubeApi.qps }}
  burst: {{ .Values.kubeApi.burst }}
{{- end }}
{{- end }}
{{- with .Values.extraConfig }}
{{ toYaml . }}
{{- end }}
profiles:
{{- if .Values.profiles }}
{{ toYaml .Values.profiles }}
{{- else }}
- schedulerName: {{ .Values.schedulerName }}
{{- end }}
{{- end -}}

{{/* The Secret with tls.crt, tls.key and ca.crt. */}}
{{- define "kubesched.tlsSecret" -}}
{{- default (printf "%s-tls" (include "kubesched.fullname" .)) .Values.tls.existingSecret -}}
{{- end -}}

{{/* The Secret whose key "token" /metrics accepts. */}}
{{- define "kubesched.metricsTokenSecret" -}}
{{- default (printf "%s-metrics-token" (include "kubesched.fullname" .)) .Values.metricsAuth.existingSecret -}}
{{- end -}}

{{/* "true" when the extender's verbs need a client certificate; else empty. */}}
{{- define "kubesched.clientAuth" -}}
{{- if and .Values.tls.enabled .Values.tls.clientAuth (eq .Values.mode "extender") -}}true{{- end -}}
{{- end -}}

{{/* HTTP or HTTPS, for probes and scrapes. */}}
{{- define "kubesched.scheme" -}}
{{- if .Values.tls.enabled -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* The secure-serving flags (both modes). */}}
{{- define "kubesched.servingArgs" -}}
{{- if .Values.tls.enabled }}
- --tls-cert-file=/var/run/secrets/kubesched/tls/tls.crt
- --tls-private-key-file=/var/run/secrets/kubesched/tls/tls.key
{{- if or (include "kubesched.clientAuth" .) .Values.metricsAuth.enabled }}
- --client-ca-file=/var/run/secrets/kubesched/tls/ca.crt
{{- end }}
{{- end }}
{{- if .Values.metricsAuth.enabled }}
- --metrics-token-file=/var/run/secrets/kubesched/metrics-token/token
{{- end }}
{{- end -}}
