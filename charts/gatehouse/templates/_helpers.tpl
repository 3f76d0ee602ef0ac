{{/* ------------------------------------------------------------------ names and labels */}}

{{/* Chart name, 63 characters at most. */}}
{{- define "gatehouse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Prefix of every object name: `<release>-<chart>`, or the release name alone when it already holds the
chart name. 40 characters at most, so `<fullname>-cockroachdb-<region>-public` stays a DNS label.
*/}}
{{- define "gatehouse.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "gatehouse.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gatehouse.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride -}}
{{- end -}}

{{/* Selector labels: `dict "ctx" $ "component" "operator"` (and optionally "region"). Never change them. */}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gatehouse.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- with .region }}
gatehouse.dev/region: {{ . }}
{{- end }}
{{- end -}}

{{/* Every object's labels: the selector labels plus version, chart, manager and commonLabels. */}}
{{- define "gatehouse.labels" -}}
{{ include "gatehouse.selectorLabels" . }}
app.kubernetes.io/part-of: gatehouse
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ include "gatehouse.chart" .ctx }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* metadata.annotations of every object (commonAnnotations), when there are any. */}}
{{- define "gatehouse.annotations" -}}
{{- with .Values.commonAnnotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ object names */}}

{{- define "gatehouse.operator.fullname" -}}{{ include "gatehouse.fullname" . }}-operator{{- end -}}
{{- define "gatehouse.adminApi.fullname" -}}{{ include "gatehouse.fullname" . }}-admin-api{{- end -}}
{{- define "gatehouse.cockroachdb.fullname" -}}{{ include "gatehouse.fullname" . }}-cockroachdb{{- end -}}
{{- define "gatehouse.redis.fullname" -}}{{ include "gatehouse.fullname" . }}-redis{{- end -}}
{{/* Secret the operator passes to every App's pods (`--runtime-secret`). */}}
{{- define "gatehouse.runtimeSecretName" -}}{{ include "gatehouse.fullname" . }}-runtime{{- end -}}
{{/* Secret holding the admin token, for the admin API and the operator only. */}}
{{- define "gatehouse.adminSecretName" -}}{{ include "gatehouse.fullname" . }}-admin{{- end -}}
{{/* Secret with the generated (or given) passwords and tokens. */}}
{{- define "gatehouse.credentialsSecretName" -}}
{{- default (printf "%s-credentials" (include "gatehouse.fullname" .)) .Values.credentials.existingSecret -}}
{{- end -}}
{{/* Per-region DATABASE_URL Secret: `dict "ctx" $ "region" "eu-west"`. */}}
{{- define "gatehouse.databaseSecretName" -}}{{ include "gatehouse.fullname" .ctx }}-db-{{ .region }}{{- end -}}
{{/* A region's own Redis (the standby store), and the Secret holding its STANDBY_STORE_URL. */}}
{{- define "gatehouse.redis.regionName" -}}{{ include "gatehouse.redis.fullname" .ctx }}-{{ .region }}{{- end -}}
{{- define "gatehouse.storeSecretName" -}}{{ include "gatehouse.fullname" .ctx }}-store-{{ .region }}{{- end -}}

{{- define "gatehouse.operator.serviceAccountName" -}}
{{- if .Values.operator.serviceAccount.create -}}
{{- default (include "gatehouse.operator.fullname" .) .Values.operator.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.operator.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The region a region entry's CockroachDB nodes declare (`region=` locality tier). */}}
{{- define "gatehouse.locality" -}}{{ default .name .locality }}{{- end -}}

{{/* CockroachDB nodes of a region entry (default 3). */}}
{{- define "gatehouse.cockroachdb.replicas" -}}{{ dig "cockroachdb" "replicas" 3 . | int }}{{- end -}}

{{/* The first region, or cockroachdb.primaryRegion. */}}
{{- define "gatehouse.primaryRegion" -}}
{{- default (default dict (first .Values.regions)).name .Values.cockroachdb.primaryRegion -}}
{{- end -}}

{{/* The region entry named by gatehouse.primaryRegion, as YAML (`fromYaml` it). */}}
{{- define "gatehouse.primaryRegionEntry" -}}
{{- $primary := include "gatehouse.primaryRegion" . -}}
{{- range .Values.regions }}{{ if eq .name $primary }}{{ toYaml . }}{{ end }}{{ end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ images */}}

{{/* `dict "registry" ... "repository" ... "tag" ... "digest" ...` to `registry/repository:tag` or `@digest`. */}}
{{- define "gatehouse.imageRef" -}}
{{- $ref := ternary .repository (printf "%s/%s" .registry .repository) (empty .registry) -}}
{{- if .digest -}}{{ printf "%s@%s" $ref .digest }}{{- else -}}{{ printf "%s:%s" $ref (toString .tag) }}{{- end -}}
{{- end -}}

{{/* A Gatehouse image: `dict "ctx" $ "which" "api"`. */}}
{{- define "gatehouse.image" -}}
{{- $i := .ctx.Values.images -}}
{{- include "gatehouse.imageRef" (dict "registry" $i.registry "repository" (index $i .which).repository "tag" (default .ctx.Chart.AppVersion $i.tag) "digest" $i.digest) -}}
{{- end -}}

{{- define "gatehouse.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets -}}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ in-cluster addresses */}}

{{- define "gatehouse.svcSuffix" -}}{{ include "gatehouse.namespace" . }}.svc.{{ .Values.clusterDomain }}{{- end -}}

{{/* URL of the admin API the operator calls. */}}
{{- define "gatehouse.adminApiUrl" -}}
{{- if .Values.adminApi.enabled -}}
http://{{ include "gatehouse.adminApi.fullname" . }}.{{ include "gatehouse.svcSuffix" . }}:8080
{{- else -}}
{{- .Values.adminApi.externalUrl -}}
{{- end -}}
{{- end -}}

{{/* CockroachDB join list: the first three nodes of every region. */}}
{{- define "gatehouse.cockroachdb.joinList" -}}
{{- $crdb := include "gatehouse.cockroachdb.fullname" . -}}
{{- $suffix := include "gatehouse.svcSuffix" . -}}
{{- $hosts := list -}}
{{- range .Values.regions -}}
{{- $region := .name -}}
{{- range $i := until (min 3 (include "gatehouse.cockroachdb.replicas" .) | int) -}}
{{- $hosts = append $hosts (printf "%s-%s-%d.%s.%s:26257" $crdb $region $i $crdb $suffix) -}}
{{- end -}}
{{- end -}}
{{- join "," $hosts -}}
{{- end -}}

{{/* ------------------------------------------------------------------ validations */}}

{{/*
Every check that a schema cannot express, each failing with one readable sentence. Included from the
operator Deployment, which every configuration renders.
*/}}
{{- define "gatehouse.validateValues" -}}
{{- $messages := list -}}
{{- $messages = append $messages (include "gatehouse.validate.regions" . | trim) -}}
{{- $messages = append $messages (include "gatehouse.validate.operator" . | trim) -}}
{{- $messages = append $messages (include "gatehouse.validate.database" . | trim) -}}
{{- $messages = append $messages (include "gatehouse.validate.redis" . | trim) -}}
{{- $messages = append $messages (include "gatehouse.validate.apps" . | trim) -}}
{{- $messages = without $messages "" -}}
{{- if $messages -}}
{{- printf "\n\nVALUES VALIDATION:\n%s" (join "\n" $messages) | fail -}}
{{- end -}}
{{- end -}}

{{- define "gatehouse.validate.regions" -}}
{{- $seen := dict -}}
{{- $localities := dict -}}
{{- if not .Values.regions -}}
gatehouse: regions is empty: name at least one region, e.g. --set regions[0].name=eu-west.
{{- end -}}
{{- range $i, $r := .Values.regions -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$" (toString $r.name)) }}
gatehouse: regions[{{ $i }}].name {{ $r.name | quote }} is not a short DNS label: use at most 20 lowercase letters, digits and dashes, e.g. eu-west.
{{- else if hasKey $seen $r.name }}
gatehouse: region {{ $r.name | quote }} is listed twice in regions: region names must be unique.
{{- end -}}
{{- $_ := set $seen (toString $r.name) true -}}
{{- $loc := include "gatehouse.locality" $r -}}
{{- if hasKey $localities $loc }}
gatehouse: regions {{ get $localities $loc | quote }} and {{ $r.name | quote }} both use the CockroachDB locality {{ $loc | quote }}: each region needs its own.
{{- end -}}
{{- $_ := set $localities $loc (toString $r.name) -}}
{{- $sts := printf "%s-%s" (include "gatehouse.cockroachdb.fullname" $) (toString $r.name) -}}
{{- if and $.Values.cockroachdb.enabled (gt (len $sts) 52) }}
gatehouse: the CockroachDB StatefulSet of region {{ $r.name | quote }} would be named {{ $sts | quote }} ({{ len $sts }} characters); StatefulSet names must stay within 52 (their pods' revision label adds 11): shorten fullnameOverride, the release name or the region name.
{{- end -}}
{{- end -}}
{{- if and .Values.cockroachdb.primaryRegion (not (hasKey $seen .Values.cockroachdb.primaryRegion)) }}
gatehouse: cockroachdb.primaryRegion {{ .Values.cockroachdb.primaryRegion | quote }} is not one of the regions ({{ keys $seen | sortAlpha | join ", " }}).
{{- end -}}
{{- end -}}

{{- define "gatehouse.validate.operator" -}}
{{- if and (gt (int .Values.operator.replicas) 1) (not .Values.operator.leaderElection.enabled) }}
gatehouse: operator.replicas is {{ .Values.operator.replicas }} but operator.leaderElection.enabled is false: replicas without a leader would all reconcile the same Apps; enable leader election or run one replica.
{{- end -}}
{{- if and (not .Values.adminApi.enabled) (not .Values.adminApi.externalUrl) }}
gatehouse: adminApi.enabled is false and adminApi.externalUrl is empty: the operator needs an admin API to register Apps; enable the in-cluster one or give its URL.
{{- end -}}
{{- $m := .Values.operator.metrics -}}
{{- if and $m.serviceMonitor.enabled (not $m.service.enabled) }}
gatehouse: operator.metrics.serviceMonitor.enabled needs operator.metrics.service.enabled: the ServiceMonitor scrapes through that Service.
{{- end -}}
{{- range $i, $r := $m.readers -}}
{{- if not (and $r.namespace $r.name) }}
gatehouse: operator.metrics.readers[{{ $i }}] needs a namespace and a name (a ServiceAccount), e.g. {namespace: monitoring, name: prometheus-k8s}.
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "gatehouse.validate.database" -}}
{{- $c := .Values.cockroachdb -}}
{{- if $c.enabled -}}
{{- if and (eq $c.survivalGoal "region") (lt (len .Values.regions) 3) }}
gatehouse: cockroachdb.survivalGoal is "region" but only {{ len .Values.regions }} region(s) are listed: surviving a region failure needs at least 3 regions; use survivalGoal "zone" or add regions.
{{- end -}}
{{- range .Values.regions -}}
{{- if lt (include "gatehouse.cockroachdb.replicas" . | int) 1 }}
gatehouse: region {{ .name | quote }} has cockroachdb.replicas {{ include "gatehouse.cockroachdb.replicas" . }}: every region needs at least one CockroachDB node (3 to survive a zone failure).
{{- end -}}
{{- end -}}
{{- if and $c.tls.enabled (or $c.tls.certsSecret $c.tls.clientRootSecret) (not (and $c.tls.certsSecret $c.tls.clientRootSecret)) }}
gatehouse: cockroachdb.tls.certsSecret and cockroachdb.tls.clientRootSecret go together: give both (node and root client certificates from the same CA) or neither (the chart generates them).
{{- end -}}
{{- $both := concat $c.tables.regionalByRow $c.tables.global -}}
{{- range $t := $c.tables.regionalByRow -}}
{{- if has $t $c.tables.global }}
gatehouse: table {{ $t | quote }} is in both cockroachdb.tables.regionalByRow and cockroachdb.tables.global: a table has one locality.
{{- end -}}
{{- end -}}
{{- range $t := $both -}}
{{- if not (regexMatch "^[a-z_][a-z0-9_]*$" $t) }}
gatehouse: cockroachdb.tables lists {{ $t | quote }}, which is not a plain SQL table name (lowercase letters, digits, underscores).
{{- end -}}
{{- end -}}
{{- else -}}
{{- if not .Values.externalDatabase.url -}}
{{- range .Values.regions -}}
{{- if not (hasKey $.Values.externalDatabase.regionUrls .name) }}
gatehouse: cockroachdb.enabled is false and region {{ .name | quote }} has no database: set externalDatabase.url (or externalDatabase.regionUrls.{{ .name }}).
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "gatehouse.validate.redis" -}}
{{- if and (not .Values.redis.enabled) (not .Values.externalRedis.url) }}
{{- $missing := list }}
{{- range .Values.regions }}{{ if not (get $.Values.externalRedis.regionUrls (toString .name)) }}{{ $missing = append $missing .name }}{{ end }}{{ end }}
{{- if $missing }}
gatehouse: redis.enabled is false and externalRedis.url is empty: the standby hosts of every region share one store to use each offline_ token once; enable redis or set externalRedis.url (or externalRedis.regionUrls for {{ join ", " $missing }}).
{{- end }}
{{- end -}}
{{- end -}}

{{/* Apps the chart creates: regions known, exactly two bypass. and two fallbackapiv1. hosts, hosts unique. */}}
{{- define "gatehouse.validate.apps" -}}
{{- $regions := dict -}}
{{- range .Values.regions }}{{ $_ := set $regions (toString .name) true }}{{ end -}}
{{- $hosts := dict -}}
{{- $apps := dict -}}
{{- range $i, $app := .Values.apps -}}
{{- $name := toString $app.name -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?$" $name) }}
gatehouse: apps[{{ $i }}].name {{ $name | quote }} is not a DNS label of at most 30 characters (it prefixes every object the operator makes).
{{- else if hasKey $apps $name }}
gatehouse: app {{ $name | quote }} is listed twice in apps.
{{- end -}}
{{- $_ := set $apps $name true -}}
{{- $spec := default dict $app.spec -}}
{{- if not $spec.regions }}
gatehouse: app {{ $name | quote }} has no regions: list at least one of {{ keys $regions | sortAlpha | join ", " }} under apps[{{ $i }}].spec.regions.
{{- end -}}
{{- range $j, $r := $spec.regions -}}
{{- $where := printf "app %q, region %q" $name (toString $r.name) -}}
{{- if not (hasKey $regions (toString $r.name)) }}
gatehouse: {{ $where }}: the region is not one of the chart's regions ({{ keys $regions | sortAlpha | join ", " }}); add it to regions first.
{{- end -}}
{{- $h := default dict $r.hosts -}}
{{- if not $h.api }}
gatehouse: {{ $where }}: hosts.api is missing: name the public host of the region's main API.
{{- end -}}
{{- $bypass := default list $h.bypass -}}
{{- $fallback := default list $h.fallback -}}
{{- if ne (len $bypass) 2 }}
gatehouse: {{ $where }}: hosts.bypass must list exactly two host names starting with "bypass." (clients try both); it lists {{ len $bypass }}.
{{- end -}}
{{- if ne (len $fallback) 2 }}
gatehouse: {{ $where }}: hosts.fallback must list exactly two host names starting with "fallbackapiv1." (clients try both); it lists {{ len $fallback }}.
{{- end -}}
{{- range $bypass -}}
{{- if not (hasPrefix "bypass." (toString .)) }}
gatehouse: {{ $where }}: bypass host {{ . | quote }} must start with "bypass.".
{{- end -}}
{{- end -}}
{{- range $fallback -}}
{{- if not (hasPrefix "fallbackapiv1." (toString .)) }}
gatehouse: {{ $where }}: fallback host {{ . | quote }} must start with "fallbackapiv1.".
{{- end -}}
{{- end -}}
{{- range $host := compact (concat (list $h.api) $bypass $fallback) -}}
{{- if hasKey $hosts (toString $host) }}
gatehouse: host {{ $host | quote }} is used by {{ get $hosts (toString $host) }} and by {{ $where }}: a host routes to one app region only.
{{- end -}}
{{- $_ := set $hosts (toString $host) $where -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* ------------------------------------------------------------------ CockroachDB certificates */}}

{{- define "gatehouse.cockroachdb.nodeCertsSecret" -}}
{{- default (printf "%s-node-certs" (include "gatehouse.cockroachdb.fullname" .)) .Values.cockroachdb.tls.certsSecret -}}
{{- end -}}

{{- define "gatehouse.cockroachdb.clientRootCertsSecret" -}}
{{- default (printf "%s-client-root-certs" (include "gatehouse.cockroachdb.fullname" .)) .Values.cockroachdb.tls.clientRootSecret -}}
{{- end -}}

{{/* `--certs-dir=...` or `--insecure`, for every cockroach command. */}}
{{- define "gatehouse.cockroachdb.securityFlag" -}}
{{- if .Values.cockroachdb.tls.enabled -}}--certs-dir=/cockroach/cockroach-certs{{- else -}}--insecure{{- end -}}
{{- end -}}

{{- define "gatehouse.cockroachdb.image" -}}
{{- include "gatehouse.imageRef" .Values.cockroachdb.image -}}
{{- end -}}

{{/*
The init container that copies certificates from a Secret into a memory emptyDir with 0400 keys
(cockroach refuses group-readable keys): `dict "ctx" $ "secret" "node"|"client"`.
*/}}
{{- define "gatehouse.cockroachdb.copyCertsContainer" -}}
- name: copy-certs
  image: {{ include "gatehouse.cockroachdb.image" .ctx }}
  imagePullPolicy: {{ .ctx.Values.cockroachdb.image.pullPolicy }}
  command:
    - /bin/bash
    - -ec
    - cp -f /certs-secret/* /cockroach/cockroach-certs/ && chmod 0400 /cockroach/cockroach-certs/*.key
  securityContext:
    {{- toYaml .ctx.Values.cockroachdb.containerSecurityContext | nindent 4 }}
  resources:
    {{- toYaml .ctx.Values.cockroachdb.jobResources | nindent 4 }}
  volumeMounts:
    - name: certs
      mountPath: /cockroach/cockroach-certs
    - name: certs-secret
      mountPath: /certs-secret
      readOnly: true
{{- end -}}

{{/*
Pod spec of the Jobs that run a script from the scripts ConfigMap as root (client certificate):
`dict "ctx" $ "script" "init.sh"`.
*/}}
{{- define "gatehouse.cockroachdb.jobPodSpec" -}}
{{- $c := .ctx.Values.cockroachdb -}}
{{- $primary := include "gatehouse.primaryRegionEntry" .ctx | fromYaml -}}
serviceAccountName: {{ include "gatehouse.cockroachdb.fullname" .ctx }}
automountServiceAccountToken: false
enableServiceLinks: false
restartPolicy: OnFailure
{{- with include "gatehouse.imagePullSecrets" .ctx }}
{{ . }}
{{- end }}
securityContext:
  {{- toYaml $c.podSecurityContext | nindent 2 }}
{{- with $primary.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $primary.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $c.tls.enabled }}
initContainers:
  {{- include "gatehouse.cockroachdb.copyCertsContainer" (dict "ctx" .ctx) | nindent 2 }}
{{- end }}
containers:
  - name: {{ trimSuffix ".sh" .script }}
    image: {{ include "gatehouse.cockroachdb.image" .ctx }}
    imagePullPolicy: {{ $c.image.pullPolicy }}
    command: ["/bin/bash", "/scripts/{{ .script }}"]
    {{- if $c.tls.enabled }}
    env:
      - name: DATABASE_PASSWORD
        valueFrom:
          secretKeyRef:
            name: {{ include "gatehouse.credentialsSecretName" .ctx }}
            key: database-password
    {{- end }}
    resources:
      {{- toYaml $c.jobResources | nindent 6 }}
    securityContext:
      {{- toYaml $c.containerSecurityContext | nindent 6 }}
    volumeMounts:
      - name: scripts
        mountPath: /scripts
        readOnly: true
      - name: tmp
        mountPath: /tmp
      {{- if $c.tls.enabled }}
      - name: certs
        mountPath: /cockroach/cockroach-certs
      {{- end }}
volumes:
  - name: scripts
    configMap:
      name: {{ include "gatehouse.cockroachdb.fullname" .ctx }}-scripts
  - name: tmp
    emptyDir: {}
  {{- if $c.tls.enabled }}
  - name: certs
    emptyDir:
      medium: Memory
      sizeLimit: 1Mi
  - name: certs-secret
    secret:
      secretName: {{ include "gatehouse.cockroachdb.clientRootCertsSecret" .ctx }}
      defaultMode: 0400
      items:
        - key: ca.crt
          path: ca.crt
        - key: client.root.crt
          path: client.root.crt
        - key: client.root.key
          path: client.root.key
  {{- end }}
{{- end -}}
