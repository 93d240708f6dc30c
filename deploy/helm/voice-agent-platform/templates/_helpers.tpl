{{/* Names: "<release>" when it already says voice-agent-platform, else "<release>-voice-agent-platform". */}}
{{- define "vap.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "vap.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one role: (list $ "api"). */}}
{{- define "vap.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ $.Chart.Name }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "vap.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "vap.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "vap.fullname" .)) -}}
{{- end -}}

{{- define "vap.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "vap.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* https://<host> of the Ingress unless publicBaseUrl says otherwise; empty when neither. */}}
{{- define "vap.publicBaseUrl" -}}
{{- if .Values.publicBaseUrl -}}
{{- .Values.publicBaseUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.host -}}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tlsSecretName "")) .Values.ingress.host -}}
{{- end -}}
{{- end -}}

{{/* Every process reads the same configuration (ConfigMap and Secret) through these. */}}
{{- define "vap.envFrom" -}}
- configMapRef:
    name: {{ include "vap.fullname" . }}-config
- secretRef:
    name: {{ include "vap.secretName" . }}
{{- end -}}

{{- define "vap.databaseEnv" -}}
{{- with .Values.database.existingSecret.name -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.database.existingSecret.key }}
{{- end -}}
{{- end -}}

{{/* Restarts pods when their configuration changes. */}}
{{- define "vap.configChecksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secrets: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/* Writable places on a read-only root file system: /tmp, and DATA_DIR's volume. */}}
{{- define "vap.volumes" -}}
- name: tmp
  emptyDir: {}
- name: data
{{- if .Values.recordings.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ .Values.recordings.persistence.existingClaim | default (printf "%s-recordings" (include "vap.fullname" .)) }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end -}}

{{- define "vap.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
- name: data
  mountPath: /var/lib/voice-agent-platform
{{- end -}}

{{- define "vap.podSecurity" -}}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
serviceAccountName: {{ include "vap.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
