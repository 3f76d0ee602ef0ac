#!/usr/bin/env bash
# Start the local cluster (see README.md) and return once every node is Ready; `down.sh` stops it. A failed
# start tears down what it started. Writes $S/env (KUBECONFIG and the cluster's addresses) for the tests.
set -Eeuo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T0=$(date +%s.%N)
phase() { log "+$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s $*"; }

[[ $EUID -eq 0 ]] || die 'needs root (network namespaces, containerd, the kubelet)'
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns; do
  [[ -x $BIN/$b ]] || die "$BIN/$b is missing: bash .ci/tools.sh control-plane node"
done
for b in containerd ctr runc socat iptables nsenter openssl buildah; do
  command -v "$b" >/dev/null || die "$b is missing: apt-get install containerd runc containernetworking-plugins iptables catatonit debootstrap buildah socat"
done
[[ -x /usr/lib/cni/bridge && -x /usr/bin/catatonit ]] || die 'apt-get install containernetworking-plugins catatonit'
if [[ -d $S/pids ]] && compgen -G "$S/pids/*" >/dev/null; then
  die "a cluster is already running from $S (stop it: bash loadtest/cluster/down.sh)"
fi
for ns in "$HUB_NS" $(for r in "${REGIONS[@]}"; do node_ns "$r"; done); do
  [[ ! -e /run/netns/$ns ]] || die "network namespace $ns exists (left over? bash loadtest/cluster/down.sh)"
done

rm -rf "$S" && mkdir -p "$S"/{pids,logs,relay,host} "$CONTAINERD_CACHE"
trap 'status=$?; log "start failed (exit $status): tearing down"; bash "$here/down.sh"; exit $status' ERR

# --- host state to restore: sysctls, paths the components create, pod network namespaces
for k in "${SYSCTLS[@]}"; do echo "$k=$(sysctl -n "$k")"; done >"$S/host/sysctls"
for p in "${HOST_PATHS[@]}"; do [[ -e $p ]] || echo "$p"; done >"$S/host/absent-paths"
ls /run/netns 2>/dev/null >"$S/host/netns-before" || true

# --- images: pause (Debian's catatonit) and the three Gatehouse images from the working tree (buildah's
# layer cache makes an unchanged image a few seconds); CLUSTER_IMAGES=keep uses the archives as they are.
if [[ ${CLUSTER_IMAGES:-build} == keep ]]; then
  for i in pause api standby operator; do [[ -f $IMAGES/$i.tar ]] || die "$IMAGES/$i.tar is missing: bash $here/images.sh"; done
else
  bash "$here/images.sh" api standby operator
  [[ -f $IMAGES/pause.tar ]] || bash "$here/images.sh" pause
fi
phase "images ready"

# --- network: the hub with its bridge, one namespace per node linked to it by a veth pair
ip netns add "$HUB_NS"
ip -n "$HUB_NS" link set lo up
ip -n "$HUB_NS" link add ghbr0 type bridge
ip -n "$HUB_NS" addr add "$HUB_IP/24" dev ghbr0
ip -n "$HUB_NS" link set ghbr0 up
for r in "${REGIONS[@]}"; do
  ns=$(node_ns "$r") ip=$(node_ip "$r") i=$(node_index "$r")
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$HUB_NS" link add "veth-$i" type veth peer name eth0 netns "$ns"
  ip -n "$HUB_NS" link set "veth-$i" master ghbr0 up
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "$HUB_IP"
  inns "$ns" sysctl -qw net.ipv4.ip_forward=1
  ip -n "$HUB_NS" route add "$(node_pod_cidr "$r")" via "$ip"
done
# Each node reaches the other nodes' pods directly over the bridge.
for r in "${REGIONS[@]}"; do for o in "${REGIONS[@]}"; do
  [[ $r == "$o" ]] || ip -n "$(node_ns "$r")" route add "$(node_pod_cidr "$o")" via "$(node_ip "$o")"
done; done
phase "network namespaces ready"

# --- PKI: one CA, the API server's certificate, the service-account key pair, one admin token
mkdir -p "$S/pki"
(
  cd "$S/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 7 -subj /CN=gatehouse-local-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' "$HUB_IP" >ext.cnf
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 7 -extfile ext.cnf 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  openssl rand -hex 24 >token
  printf '%s,admin,admin,"system:masters"\n' "$(<token)" >tokens.csv
  chmod 600 ./*.key token tokens.csv
)
kubeconfig() { # SERVER -> a kubeconfig with the admin token
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: gatehouse-local\n  cluster: {server: "%s", certificate-authority: "%s"}\nusers:\n- name: admin\n  user: {token: "%s"}\ncontexts:\n- name: gatehouse-local\n  context: {cluster: gatehouse-local, user: admin}\ncurrent-context: gatehouse-local\n' \
    "$1" "$S/pki/ca.crt" "$(<"$S/pki/token")"
}
kubeconfig "https://$HUB_IP:$API_PORT" >"$S/kubeconfig.incluster"
kubeconfig "https://127.0.0.1:$API_PORT" >"$S/kubeconfig"
chmod 600 "$S/kubeconfig.incluster" "$S/kubeconfig"

# --- control plane in the hub
start etcd "$HUB_NS" "$BIN/etcd" --name=hub --data-dir="$S/etcd" --unsafe-no-fsync --log-level=warn \
  --listen-client-urls=http://127.0.0.1:22500 --advertise-client-urls=http://127.0.0.1:22500 \
  --listen-peer-urls=http://127.0.0.1:22501 --initial-advertise-peer-urls=http://127.0.0.1:22501 \
  --initial-cluster=hub=http://127.0.0.1:22501 --listen-metrics-urls=http://127.0.0.1:22505
wait_for 'etcd' 30 inns "$HUB_NS" curl -sf http://127.0.0.1:22500/health
start kube-apiserver "$HUB_NS" "$BIN/kube-apiserver" --advertise-address="$HUB_IP" --bind-address=0.0.0.0 \
  --secure-port="$API_PORT" --etcd-servers=http://127.0.0.1:22500 --service-cluster-ip-range="$SERVICE_CIDR" \
  --authorization-mode=Node,RBAC --allow-privileged=true --tls-cert-file="$S/pki/apiserver.crt" \
  --tls-private-key-file="$S/pki/apiserver.key" --client-ca-file="$S/pki/ca.crt" --token-auth-file="$S/pki/tokens.csv" \
  --service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$S/pki/sa.pub" \
  --service-account-signing-key-file="$S/pki/sa.key" --cert-dir="$S/apiserver-certs" \
  --service-node-port-range=22550-22599 --kubelet-preferred-address-types=InternalIP
relay api host "127.0.0.1:$API_PORT" "$HUB_NS" "$HUB_IP:$API_PORT"
wait_for 'kube-apiserver' 90 bash -c "source '$here/lib.sh'; api GET /readyz"
phase "API server ready"
start kube-controller-manager "$HUB_NS" "$BIN/kube-controller-manager" --kubeconfig="$S/kubeconfig.incluster" \
  --bind-address=127.0.0.1 --secure-port=22503 --leader-elect=false --cluster-name=gatehouse-local \
  --service-account-private-key-file="$S/pki/sa.key" --root-ca-file="$S/pki/ca.crt" --use-service-account-credentials=true \
  --flex-volume-plugin-dir="$S/flexvolume"
start kube-scheduler "$HUB_NS" "$BIN/kube-scheduler" --kubeconfig="$S/kubeconfig.incluster" \
  --bind-address=127.0.0.1 --secure-port=22504 --leader-elect=false
cat >"$S/Corefile" <<EOF
.:53 {
  errors
  health 127.0.0.1:22506
  ready 127.0.0.1:22507
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig $S/kubeconfig.incluster gatehouse-local
    pods insecure
    fallthrough in-addr.arpa ip6.arpa
  }
  cache 5
}
EOF
start coredns "$HUB_NS" "$BIN/coredns" -conf "$S/Corefile"
# PostgreSQL and Redis of the host, at $HUB_IP:5432 and :6379 for the pods.
relay postgres "$HUB_NS" "$HUB_IP:5432" host "$PG_HOST_ADDR"
relay redis "$HUB_NS" "$HUB_IP:6379" host "$REDIS_HOST_ADDR"

# --- nodes: containerd, kubelet and kube-proxy in each node's namespace
for r in "${REGIONS[@]}"; do
  n=$S/nodes/$r ns=$(node_ns "$r") ip=$(node_ip "$r") name=$(node_name "$r")
  mkdir -p "$n"/{containerd,cni/net.d,pod-logs,pki}
  # The kubelet's cgroups live under /gh-<region> in each hierarchy, so that two kubelets do not share
  # /kubepods. A new cpuset cgroup starts with no CPUs: copy its parent's.
  for h in /sys/fs/cgroup/*/; do
    [[ -e $h/cgroup.procs && ! -L ${h%/} ]] || continue
    mkdir -p "$h/gh-$r"
    if [[ -e $h/cpuset.cpus ]]; then cat "$h/cpuset.cpus" >"$h/gh-$r/cpuset.cpus"; cat "$h/cpuset.mems" >"$h/gh-$r/cpuset.mems"; fi
  done
  cat >"$n/cni/net.d/10-pods.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(node_pod_cidr "$r")"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$n/cni/ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}
]}
EOF
  cat >"$n/containerd/config.toml" <<EOF
version = 2
root = "$CONTAINERD_CACHE/$r"
state = "$n/containerd/state"
[grpc]
  address = "$n/containerd/containerd.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$n/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:local"
  restrict_oom_score_adj = true
  disable_apparmor = true
  disable_tcp_service = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "22540"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$n/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$n/containerd/runc"
EOF
  start "containerd-$r" "$ns" containerd --config "$n/containerd/config.toml"
done
import_images() { # REGION: the images into the node's containerd, unless this archive is already in
  local sock=$S/nodes/$1/containerd/containerd.sock i stamp name
  wait_for "containerd on $1" 30 ctr --address "$sock" version
  for i in pause api standby operator; do
    stamp=$CONTAINERD_CACHE/$1.$i.imported name=localhost/gatehouse/$i:${CLUSTER_IMAGE_TAG:-0.0.0-dev}
    [[ $i == pause ]] && name=localhost/pause:local
    [[ -f $stamp && $(<"$stamp") == "$(stat -c '%s %Y' "$IMAGES/$i.tar")" ]] &&
      ctr --address "$sock" -n k8s.io images ls -q | grep -qxF "$name" && continue
    ctr --address "$sock" -n k8s.io images import "$IMAGES/$i.tar" >/dev/null
    stat -c '%s %Y' "$IMAGES/$i.tar" >"$stamp"
  done
}
pids=()
for r in "${REGIONS[@]}"; do import_images "$r" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
phase "containerd up on ${#REGIONS[@]} nodes, images imported"

for r in "${REGIONS[@]}"; do
  n=$S/nodes/$r ns=$(node_ns "$r") ip=$(node_ip "$r") name=$(node_name "$r")
  cat >"$n/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /gh-$r
containerRuntimeEndpoint: unix://$n/containerd/containerd.sock
address: $ip
port: 22520
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 22521
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
podLogsDir: $n/pod-logs
volumePluginDir: $n/volume-plugins
clusterDomain: cluster.local
clusterDNS: [$HUB_IP]
resolvConf: ""
failSwapOn: false
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 50
EOF
  start "kubelet-$r" "$ns" "$BIN/kubelet" --config="$n/kubelet.yaml" --kubeconfig="$S/kubeconfig.incluster" \
    --root-dir="$n/kubelet" --cert-dir="$n/pki" --hostname-override="$name" --node-ip="$ip" \
    --node-labels="topology.kubernetes.io/region=$r,gatehouse.dev/local-cluster=true" -v=1
  cat >"$n/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $S/kubeconfig.incluster}
hostnameOverride: $name
clusterCIDR: $POD_CIDR
bindAddress: $ip
metricsBindAddress: 127.0.0.1:22530
healthzBindAddress: 127.0.0.1:22531
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start "kube-proxy-$r" "$ns" "$BIN/kube-proxy" --config="$n/kube-proxy.yaml"
done

node_ready() { # NAME: Ready and without taints
  api GET "/api/v1/nodes/$1" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const n=JSON.parse(s);
    const ok=n.status.conditions.some(c=>c.type==="Ready"&&c.status==="True")&&!(n.spec.taints||[]).length;process.exit(ok?0:1)})'
}
for r in "${REGIONS[@]}"; do wait_for "node $(node_name "$r") Ready" 120 node_ready "$(node_name "$r")"; done
wait_for 'CoreDNS ready' 30 inns "$HUB_NS" curl -sf http://127.0.0.1:22507/ready
wait_for 'default ServiceAccount' 30 api GET /api/v1/namespaces/default/serviceaccounts/default
phase "${#REGIONS[@]} nodes Ready"

{
  echo "KUBECONFIG=$S/kubeconfig"
  echo "CLUSTER_DIR=$S"
  echo "CLUSTER_API=https://127.0.0.1:$API_PORT"
  echo "CLUSTER_REGIONS=${REGIONS[*]}"
  echo "CLUSTER_HUB_IP=$HUB_IP"
  echo "CLUSTER_DATABASE_HOST=$HUB_IP:5432"
  echo "CLUSTER_REDIS_HOST=$HUB_IP:6379"
} >"$S/env"
trap - ERR
