#!/usr/bin/env bash
# Reach a Service of the local cluster from the host, through its ClusterIP as the pods see it:
#   bash loadtest/cluster/forward.sh NAME HOST_PORT NAMESPACE/SERVICE:PORT [REGION]
#   bash loadtest/cluster/forward.sh stop NAME
# listens on 127.0.0.1:HOST_PORT and forwards each connection into REGION's node (default: the first
# region), where kube-proxy sends it to one of the Service's ready pods. down.sh stops every forward.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -f $S/env ]] || die "no cluster is running ($S/env is missing): npm run cluster"
if [[ ${1:-} == stop ]]; then
  stop "relay-fwd-${2:?name}-out" 2
  stop "relay-fwd-$2-in" 2
  exit 0
fi
name=${1:?name} port=${2:?host port} target=${3:?namespace/service:port} region=${4:-${REGIONS[0]}}
ns=${target%%/*} rest=${target#*/}
svc=${rest%%:*} svc_port=${rest##*:}
ip=$(api GET "/api/v1/namespaces/$ns/services/$svc" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).spec.clusterIP))')
[[ $ip =~ ^[0-9.]+$ ]] || die "service $ns/$svc has no ClusterIP"
alive "relay-fwd-$name-out" && { stop "relay-fwd-$name-out" 2; stop "relay-fwd-$name-in" 2; }
relay "fwd-$name" host "127.0.0.1:$port" "$(node_ns "$region")" "$ip:$svc_port"
wait_for "forward $name" 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port"
echo "http://127.0.0.1:$port -> $ns/$svc ($ip:$svc_port) from $(node_name "$region")"
