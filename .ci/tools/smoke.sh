#!/usr/bin/env bash
# Smoke test of the toolchain built by .ci/tools.sh: a real control plane on 127.0.0.1 (etcd,
# kube-apiserver, kube-controller-manager) that turns a Deployment into a ReplicaSet, then the
# versions of helm, kubeconform and k6 and the k6 Argon2id extension against a known vector.
# Usage: bash .ci/tools/smoke.sh   (builds missing tools first unless SMOKE_BUILD=0;
#        SMOKE_KEEP=1 keeps the work folder with the logs, certificates and kubeconfig)
# Stops everything it started on exit, also on failure or Ctrl-C.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${GATEHOUSE_TOOLS_DIR:-$repo/.cache/tools}
bin=$out/bin
t_start=$(date +%s.%N)
elapsed() { awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%5.1fs", b - a }'; }
log() { echo "smoke [$(elapsed)] $*"; }
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }

if [[ ${SMOKE_BUILD:-1} != 0 ]]; then bash "$repo/.ci/tools.sh" all; fi
for t in etcd kube-apiserver kube-controller-manager helm kubeconform k6; do
  [[ -x $bin/$t ]] || fail "$bin/$t is missing"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-smoke.XXXXXX")
pids=()
cleanup() {
  local rc=$? pid
  # Stop in reverse order of start (controller-manager, apiserver, etcd): SIGTERM, then SIGKILL.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if ((rc != 0)); then
    for f in "$work"/*.log; do [[ -f $f ]] && { echo "---- last lines of $f"; tail -n 25 "$f"; }; done >&2
  fi
  if [[ ${SMOKE_KEEP:-0} == 1 ]]; then echo "smoke: kept $work"; else rm -rf "$work"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Four free loopback ports (the kernel picks them; a tiny race with other processes is acceptable).
read -r etcd_port peer_port api_port kcm_port < <(node -e '
  const net = require("node:net");
  (async () => {
    const socks = await Promise.all([0, 1, 2, 3].map(() => new Promise((ok) => {
      const s = net.createServer(); s.listen(0, "127.0.0.1", () => ok(s)); })));
    console.log(socks.map((s) => s.address().port).join(" ")); socks.forEach((s) => s.close());
  })();')

# ---- credentials: a CA, the apiserver's serving cert, the service-account key pair, an admin token
pki=$work/pki
mkdir -p "$pki"
(
  cd "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=gatehouse-test-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj /CN=kube-apiserver 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >ext.cnf
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 2 -extfile ext.cnf 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
)
token=$(openssl rand -hex 24)
# token,user,uid,"groups": system:masters is cluster-admin, for the smoke test and the controller-manager.
printf '%s,gatehouse-admin,gatehouse-admin,"system:masters"\n' "$token" >"$pki/tokens.csv"
cat >"$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$api_port", certificate-authority: "$pki/ca.crt"}
users:
- name: admin
  user: {token: "$token"}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
EOF

api() { # <method> <path> [json body]: prints the body, fails on HTTP >= 400
  curl -sS --fail-with-body --cacert "$pki/ca.crt" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -X "$1" "https://127.0.0.1:$api_port$2" ${3:+--data "$3"}
}
wait_for() { # <what> <seconds> <command...>
  local what=$1 secs=$2; shift 2
  local deadline=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) < deadline)) || fail "timed out after ${secs}s waiting for $what"
    sleep 0.25
  done
}
alive() { kill -0 "$1" 2>/dev/null || fail "$2 exited early"; }

# ---- etcd
etcd_cmd=("$bin/etcd" --name=gatehouse-test --data-dir="$work/etcd"
  --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port"
  --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port"
  --initial-cluster="gatehouse-test=http://127.0.0.1:$peer_port" --unsafe-no-fsync --log-level=warn)
log "starting: ${etcd_cmd[*]}"
"${etcd_cmd[@]}" >"$work/etcd.log" 2>&1 &
pids+=($!)
wait_for "etcd /health" 30 curl -sf "http://127.0.0.1:$etcd_port/health"
log "etcd ready: $(curl -s "http://127.0.0.1:$etcd_port/version")"

# ---- kube-apiserver (the flags controller-runtime's envtest uses, plus a token file and our certs)
api_cmd=("$bin/kube-apiserver" --advertise-address=127.0.0.1 --bind-address=127.0.0.1 --secure-port="$api_port"
  --etcd-servers="http://127.0.0.1:$etcd_port" --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true
  --disable-admission-plugins=ServiceAccount --authorization-mode=RBAC --endpoint-reconciler-type=none
  --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" --client-ca-file="$pki/ca.crt"
  --token-auth-file="$pki/tokens.csv" --service-account-issuer="https://127.0.0.1:$api_port"
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key"
  --cert-dir="$work/apiserver-certs")
log "starting: ${api_cmd[*]}"
"${api_cmd[@]}" >"$work/kube-apiserver.log" 2>&1 &
pids+=($!)
api_pid=$!
wait_for "kube-apiserver /readyz" 90 api GET /readyz
alive "$api_pid" kube-apiserver
log "kube-apiserver ready: $(api GET /version | tr -d ' \n')"

# ---- kube-controller-manager
kcm_cmd=("$bin/kube-controller-manager" --kubeconfig="$work/kubeconfig" --bind-address=127.0.0.1
  --secure-port="$kcm_port" --leader-elect=false --service-account-private-key-file="$pki/sa.key"
  --root-ca-file="$pki/ca.crt" --cluster-name=gatehouse-test)
log "starting: ${kcm_cmd[*]}"
"${kcm_cmd[@]}" >"$work/kube-controller-manager.log" 2>&1 &
pids+=($!)
kcm_pid=$!
wait_for "kube-controller-manager /healthz" 60 curl -skf "https://127.0.0.1:$kcm_port/healthz"
alive "$kcm_pid" kube-controller-manager
log "kube-controller-manager healthy"

# ---- a namespace and a Deployment; the controller-manager must create its ReplicaSet
ns=smoke-$(openssl rand -hex 3)
api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}" >/dev/null
api POST "/apis/apps/v1/namespaces/$ns/deployments" '{
  "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
    "template": {"metadata": {"labels": {"app": "web"}},
      "spec": {"containers": [{"name": "web", "image": "registry.invalid/web:1"}]}}}}' >/dev/null
log "created namespace $ns and deployment web"
rs_owned() {
  api GET "/apis/apps/v1/namespaces/$ns/replicasets" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const rs = JSON.parse(s).items.filter((r) => (r.metadata.ownerReferences || []).some((o) => o.kind === "Deployment" && o.name === "web"));
      if (!rs.length) process.exit(1);
      console.log(rs.map((r) => `${r.metadata.name} replicas=${r.spec.replicas}`).join(", "));
    });'
}
wait_for "a ReplicaSet owned by deployment web" 60 rs_owned
log "ReplicaSet created by kube-controller-manager: $(rs_owned)"
pods() { api GET "/api/v1/namespaces/$ns/pods" | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const p = JSON.parse(s).items; if (p.length < 2) process.exit(1);
    console.log(p.map((x) => `${x.metadata.name}:${x.status.phase}`).join(" ")); });'; }
wait_for "the ReplicaSet's 2 Pods" 60 pods
log "pods (Pending: no scheduler or kubelet here): $(pods)"
api DELETE "/api/v1/namespaces/$ns" >/dev/null
log "control plane OK"

# ---- the other tools
log "helm: $("$bin/helm" version --short)"
log "kubeconform: $("$bin/kubeconform" -v)"
log "k6: $("$bin/k6" version | head -n 1)"
k6_rc=0
"$bin/k6" run --quiet --no-usage-report --vus 1 --iterations 1 "$here/k6/argon2id-check.js" >"$work/k6.log" 2>&1 || k6_rc=$?
((k6_rc == 0)) || { cat "$work/k6.log" >&2; fail "k6 Argon2id check (exit $k6_rc)"; }
grep -E '✓|✗' "$work/k6.log" | sed 's/^ */smoke        k6 check /' || fail "k6 reported no checks: $(cat "$work/k6.log")"
log "k6 Argon2id extension OK"
log "PASS"
