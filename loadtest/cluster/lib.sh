# Shared settings and helpers of the local cluster (up.sh, down.sh, run.sh, forward.sh). Sourced.
#
# Layout: one network namespace per node (gh-<region>), each with containerd, a kubelet and kube-proxy,
# and a hub namespace (gh-hub) with the control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, CoreDNS) and a bridge that links the nodes. Nothing is added to the host's network: the
# host reaches the cluster through socat relays over Unix sockets (path sockets cross namespaces).

CLUSTER_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
S=${CLUSTER_DIR:-$CLUSTER_REPO/.cache/cluster/run}
IMAGES=${CLUSTER_IMAGES_DIR:-$CLUSTER_REPO/.cache/cluster/images}
# Each node's containerd keeps its images here across runs: importing them is most of a cold start.
CONTAINERD_CACHE=${CLUSTER_CONTAINERD_CACHE:-$CLUSTER_REPO/.cache/cluster/containerd}
BIN=${GATEHOUSE_TOOLS_DIR:-$CLUSTER_REPO/.cache/tools}/bin
read -r -a REGIONS <<<"${CLUSTER_REGIONS:-eu-west us-east}"

HUB_NS=gh-hub
HUB_IP=172.31.250.1
NET_PREFIX=172.31.250
SERVICE_CIDR=10.96.0.0/24
POD_CIDR=10.244.0.0/16
API_PORT=${CLUSTER_API_PORT:-22502}
# Host ports of the relays into the hub: the API server, and the ones the pods use to reach the host's
# PostgreSQL and Redis (at $HUB_IP:5432 and :6379 inside the cluster).
PG_HOST_ADDR=${CLUSTER_PG_ADDR:-127.0.0.1:5432}
REDIS_HOST_ADDR=${CLUSTER_REDIS_ADDR:-127.0.0.1:6379}
# Host sysctls the kubelet rewrites (KernelTunableModify); saved before and restored after.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops)
# Host paths the kubelet or the CNI plugins create whatever their flags say; removed on teardown when
# they did not exist before.
HOST_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/containerd)

node_index() { local i; for i in "${!REGIONS[@]}"; do [[ ${REGIONS[$i]} == "$1" ]] && { echo $((i + 1)); return; }; done; return 1; }
node_name() { echo "node-$1"; }
node_ns() { echo "gh-$1"; }
node_ip() { echo "$NET_PREFIX.$((10 + $(node_index "$1")))"; }
node_pod_cidr() { echo "10.244.$(node_index "$1").0/24"; }

log() { printf '[cluster %s] %s\n' "$(date -u +%T)" "$*"; }
die() { printf '[cluster] ERROR: %s\n' "$*" >&2; exit 1; }

inns() { local ns=$1; shift; nsenter --net="/run/netns/$ns" "$@"; }

# start NAME NETNS|host CMD...: a long-running process in its own session (Ctrl-C in the terminal reaches
# run.sh only, which stops everything in order), its log in $S/logs/NAME.log, its pid in $S/pids/NAME.
start() {
  local name=$1 ns=$2; shift 2
  mkdir -p "$S/logs" "$S/pids"
  if [[ $ns == host ]]; then
    setsid "$@" >"$S/logs/$name.log" 2>&1 </dev/null &
  else
    setsid nsenter --net="/run/netns/$ns" "$@" >"$S/logs/$name.log" 2>&1 </dev/null &
  fi
  echo $! >"$S/pids/$name"
}

# stop NAME [SECONDS]: SIGTERM, then SIGKILL after SECONDS (default 10).
stop() {
  local f=$S/pids/$1 pid i
  [[ -f $f ]] || return 0
  pid=$(<"$f")
  if kill -TERM "$pid" 2>/dev/null; then
    for ((i = 0; i < ${2:-10} * 10; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null && log "SIGKILL $1 ($pid)"
  fi
  rm -f "$f"
}

alive() { [[ -f $S/pids/$1 ]] && kill -0 "$(<"$S/pids/$1")" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...: polls CMD every 0.2 s.
wait_for() {
  local what=$1 secs=$2 deadline
  shift 2
  deadline=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) < deadline)) || die "$what: not within ${secs}s (logs: $S/logs)"
    sleep 0.2
  done
}

# api METHOD PATH [BODY]: the API server through the host relay, as the cluster admin.
api() {
  curl -sS --fail-with-body --cacert "$S/pki/ca.crt" -H "Authorization: Bearer $(<"$S/pki/token")" \
    -H 'Content-Type: application/json' -X "$1" "https://127.0.0.1:$API_PORT$2" ${3:+--data "$3"}
}

# relay NAME LISTEN_NS LISTEN_ADDR TARGET_NS TARGET_ADDR: TCP on LISTEN_ADDR inside LISTEN_NS (or host)
# forwarded to TARGET_ADDR inside TARGET_NS, through a Unix socket in $S/relay.
relay() {
  local name=$1 lns=$2 laddr=$3 tns=$4 taddr=$5 sock
  mkdir -p "$S/relay"
  sock=$S/relay/$name.sock
  rm -f "$sock"
  start "relay-$name-in" "$tns" socat "UNIX-LISTEN:$sock,fork,mode=600" "TCP:$taddr"
  start "relay-$name-out" "$lns" socat "TCP-LISTEN:${laddr##*:},bind=${laddr%:*},fork,reuseaddr" "UNIX-CONNECT:$sock"
}
