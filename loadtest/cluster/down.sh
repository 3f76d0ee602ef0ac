#!/usr/bin/env bash
# Stop the local cluster and undo every host change up.sh made; safe to run more than once, and after a
# failed or interrupted start. The last run's logs stay in .cache/cluster/last-logs.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ -d $S ]] || { log "nothing to stop ($S does not exist)"; exit 0; }
T0=$(date +%s)

# 1. Pods first, through the API, so that the kubelets stop them and release their networks.
if alive kube-apiserver && alive relay-api-out; then
  for ns in $(api GET /api/v1/namespaces 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      for (const n of JSON.parse(s).items) if (!/^(kube-|default$)/.test(n.metadata.name)) console.log(n.metadata.name)})'); do
    api DELETE "/api/v1/namespaces/$ns" >/dev/null 2>&1
  done
  api DELETE '/api/v1/namespaces/default/pods?gracePeriodSeconds=1' >/dev/null 2>&1
  for ((i = 0; i < 60; i++)); do
    n=$(api GET /api/v1/pods 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).items.length))')
    [[ ${n:-0} == 0 ]] && break
    sleep 0.5
  done
  log "pods left after deletion: ${n:-?}"
fi

# 2. The nodes: kube-proxy and the kubelet, then whatever the kubelets left to containerd, then containerd.
for r in "${REGIONS[@]}"; do stop "kube-proxy-$r"; stop "kubelet-$r"; done
for r in "${REGIONS[@]}"; do
  sock=$S/nodes/$r/containerd/containerd.sock
  if alive "containerd-$r" && [[ -S $sock ]]; then
    for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do ctr --address "$sock" -n k8s.io tasks kill -s KILL "$id" >/dev/null 2>&1; done
    sleep 0.5
    for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do ctr --address "$sock" -n k8s.io tasks rm -f "$id" >/dev/null 2>&1; done
  fi
  stop "containerd-$r"
  # The runc shims of this node's containerd (found by its socket path, which only they carry).
  for pid in $(pgrep -f -- "-address $sock" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null && log "killed shim $pid"; done
done

# 3. Everything else this cluster started: relays, forwards, CoreDNS, the control plane.
for f in "$S"/pids/*; do [[ -e $f ]] || continue; n=${f##*/}; [[ $n == etcd || $n == kube-apiserver ]] || stop "$n" 5; done
stop kube-apiserver; stop etcd

# 4. Mounts under the cluster's folder (deepest first), pod and node network namespaces.
awk -v s="$S/" 'index($2, s) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
for ns in $(ls /run/netns 2>/dev/null); do
  if [[ $ns == cni-* ]] && ! grep -qx "$ns" "$S/host/netns-before" 2>/dev/null; then ip netns del "$ns"; fi
done
for r in "${REGIONS[@]}"; do ip netns del "$(node_ns "$r")" 2>/dev/null; done
ip netns del "$HUB_NS" 2>/dev/null

# 5. The kubelets' cgroups, depth first.
for r in "${REGIONS[@]}"; do
  for h in /sys/fs/cgroup/*/gh-"$r"; do
    [[ -d $h ]] || continue
    find "$h" -depth -type d -exec rmdir {} + 2>/dev/null
    [[ -d $h ]] && log "cgroup left: $h"
  done
done

# 6. Host sysctls and the host paths the components created.
if [[ -s $S/host/sysctls ]]; then
  mapfile -t saved <"$S/host/sysctls"
  sysctl -qw "${saved[@]}" && log "sysctls restored: ${saved[*]}"
fi
if [[ -f $S/host/absent-paths ]]; then
  while read -r p; do
    [[ -n $p && -e $p ]] || continue
    awk -v s="$p/" 'index($2, s) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
    rm -rf "$p"
  done <"$S/host/absent-paths"
fi

# 7. Check the host is as it was, then remove the cluster's folder but its logs.
left=()
for ns in "$HUB_NS" $(for r in "${REGIONS[@]}"; do node_ns "$r"; done); do [[ -e /run/netns/$ns ]] && left+=("netns $ns"); done
for r in "${REGIONS[@]}"; do for h in /sys/fs/cgroup/*/gh-"$r"; do [[ -d $h ]] && left+=("cgroup $h"); done; done
if [[ -s $S/host/sysctls ]]; then
  while IFS='=' read -r k v; do [[ $(sysctl -n "$k") == "$v" ]] || left+=("sysctl $k=$(sysctl -n "$k"), was $v"); done <"$S/host/sysctls"
fi
for f in "$S"/pids/*; do [[ -e $f ]] && kill -0 "$(<"$f")" 2>/dev/null && left+=("process ${f##*/} $(<"$f")"); done
awk -v s="$S/" 'index($2, s) == 1' /proc/mounts | grep -q . && left+=("mounts under $S")
rm -rf "$S/../last-logs" && mv "$S/logs" "$S/../last-logs" 2>/dev/null
if ((${#left[@]})); then
  printf '[cluster] NOT restored: %s\n' "${left[@]}" >&2
  exit 1
fi
logs=$(cd "$S/.." && pwd)/last-logs
rm -rf "$S"
log "stopped in $(($(date +%s) - T0))s, host restored (logs: $logs)"
