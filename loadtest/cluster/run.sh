#!/usr/bin/env bash
# `npm run cluster`: start the local cluster, say how to reach it, stop it cleanly on Ctrl-C (or SIGTERM).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"
stopping=0
down() {
  ((stopping)) && return
  stopping=1
  echo
  log 'stopping'
  bash "$here/down.sh"
  exit "${1:-0}"
}
trap 'down 0' INT TERM
bash "$here/up.sh" || exit 1
nodes=$(for r in "${REGIONS[@]}"; do printf '%s (region %s, %s)  ' "$(node_name "$r")" "$r" "$(node_ip "$r")"; done)
cat <<EOF

Local cluster up: $nodes
  API server   https://127.0.0.1:$API_PORT (a relay into the cluster's network namespaces)
  kubeconfig   export KUBECONFIG=$S/kubeconfig
               then helm or kubectl, e.g. $BIN/helm list -A
  images       localhost/gatehouse/{api,standby,operator}:${CLUSTER_IMAGE_TAG:-0.0.0-dev} on every node
  database     the pods reach the host's PostgreSQL ($PG_HOST_ADDR) at $HUB_IP:5432, Redis ($REDIS_HOST_ADDR) at $HUB_IP:6379
  a Service    bash loadtest/cluster/forward.sh <name> <host port> <namespace>/<service>:<port>
  logs         $S/logs
Ctrl-C stops the cluster and restores the host.
EOF
while true; do
  sleep 3600 &
  wait $!
done
