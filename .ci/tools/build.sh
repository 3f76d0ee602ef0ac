#!/usr/bin/env bash
# Build Gatehouse's pinned toolchain from Go modules into ${GATEHOUSE_TOOLS_DIR:-.cache/tools}/bin.
# Usually called as `bash .ci/tools.sh [tool|group ...]`; see docs/toolchain.md.
#
#   tools:  kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns etcd helm
#           kubeconform k6
#   groups: all (default), control-plane (etcd + kube-apiserver + kube-controller-manager),
#           node (kube-scheduler + kubelet + kube-proxy + coredns: what a local cluster with real pods adds)
#
# Each tool is built from a wrapper module under .ci/tools/<module>/ whose go.mod and go.sum pin
# every dependency. A tool is skipped when its binary exists and its stamp file matches the pinned
# version and a hash of the wrapper's inputs, so a second run takes seconds.
#
# Environment:
#   GATEHOUSE_TOOLS_DIR        output folder (default: <repo>/.cache/tools); binaries in bin/
#   GATEHOUSE_TOOLS_GO_CACHES  1 = keep GOCACHE and GOMODCACHE under the output folder
#                              (go-build/ and gomod/), so CI can cache one folder; otherwise the
#                              usual GOCACHE/GOMODCACHE (from the environment or Go's defaults)
#   GATEHOUSE_TOOLS_JOBS       go build -p value (default: Go's default, the number of CPUs)
#   GATEHOUSE_TOOLS_FORCE      1 = rebuild even when the stamp matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${GATEHOUSE_TOOLS_DIR:-$repo/.cache/tools}
mkdir -p "$out/bin" "$out/stamps"
out=$(cd "$out" && pwd)
bin=$out/bin

modcacherw=
if [[ ${GATEHOUSE_TOOLS_GO_CACHES:-0} == 1 ]]; then
  # -modcacherw: the module cache is read-only by default, which would make `rm -rf <folder>` fail
  export GOCACHE=$out/go-build GOMODCACHE=$out/gomod
  modcacherw=" -modcacherw"
fi
# Never download a Go toolchain, build static binaries, never touch go.mod/go.sum while building.
export GOTOOLCHAIN=local CGO_ENABLED=0
export GOFLAGS="-trimpath -buildvcs=false -mod=readonly$modcacherw${GATEHOUSE_TOOLS_JOBS:+ -p=$GATEHOUSE_TOOLS_JOBS}${GOFLAGS:+ $GOFLAGS}"
go_version=$(go env GOVERSION)

# Bump this when the recipe below changes in a way that must invalidate every stamp.
recipe=1

all_tools=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns helm kubeconform k6)

# module dir, main package, pinned module (its version is read from the wrapper's go.mod)
tool_module() {
  case $1 in
    kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy) echo "kubernetes k8s.io/kubernetes/cmd/$1 k8s.io/kubernetes" ;;
    coredns) echo "coredns gatehouse.local/tools/coredns github.com/coredns/coredns" ;;
    etcd) echo "etcd go.etcd.io/etcd/server/v3 go.etcd.io/etcd/server/v3" ;;
    helm) echo "helm helm.sh/helm/v4/cmd/helm helm.sh/helm/v4" ;;
    kubeconform) echo "kubeconform github.com/yannh/kubeconform/cmd/kubeconform github.com/yannh/kubeconform" ;;
    k6) echo "k6 gatehouse.local/tools/k6 go.k6.io/k6/v2" ;;
    *) return 1 ;;
  esac
}

pinned_version() { # <module dir> <module path>
  awk -v m="$2" '($1 == m || ($1 == "require" && $2 == m)) { print ($1 == "require" ? $3 : $2); exit }' "$here/$1/go.mod"
}

tool_ldflags() { # <tool> <version>
  local v=$2 kv
  case $1 in
    kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy)
      kv=${v#v}
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        printf ' -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean -X %s.gitCommit=' \
          "$p" "$v" "$p" "${kv%%.*}" "$p" "$(cut -d. -f2 <<<"$kv")" "$p" "$p"
      done ;;
    helm) printf ' -X helm.sh/helm/v4/internal/version.version=%s' "$v" ;;
    kubeconform) printf ' -X main.version=%s' "$v" ;;
  esac
}

inputs_hash() { # <module dir>: everything in the wrapper module that affects the binary
  (cd "$here/$1" && find . -type f \( -name go.mod -o -name go.sum -o -name '*.go' \) -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
    sha256sum | cut -c1-16
}

# CPU seconds (user + sys) used so far by finished child processes: wall time on a shared machine
# says little, CPU time says what a build costs (an idle 2-core CI machine needs about half as long).
clk_tck=$(getconf CLK_TCK)
child_cpu() { # fields 16 and 17 of /proc/<pid>/stat (cutime, cstime), counted after the ")" of the name
  awk -v hz="$clk_tck" '{ sub(/^.*\) /, ""); printf "%.1f", ($14 + $15) / hz }' "/proc/$$/stat"
}

fmt_size() { numfmt --to=iec --suffix=B "$(stat -c %s "$1")" 2>/dev/null || stat -c %s "$1"; }

# Expand arguments into an ordered, de-duplicated list of tools.
want=()
add() { local t; for t in "${want[@]}"; do [[ $t == "$1" ]] && return; done; want+=("$1"); }
(($# == 0)) && set -- all
for a in "$@"; do
  case $a in
    all) for t in "${all_tools[@]}"; do add "$t"; done ;;
    control-plane | kubernetes) add etcd; add kube-apiserver; add kube-controller-manager ;;
    node) add kube-scheduler; add kubelet; add kube-proxy; add coredns ;;
    -h | --help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) tool_module "$a" >/dev/null || { echo "tools: unknown tool '$a' (want: ${all_tools[*]}, all, control-plane, node)" >&2; exit 2; }
       add "$a" ;;
  esac
done

echo "tools: $go_version, output $bin, GOFLAGS=$GOFLAGS"
summary=()
t_all=$(date +%s.%N)
for t in "${want[@]}"; do
  read -r dir pkg mod < <(tool_module "$t")
  ver=$(pinned_version "$dir" "$mod")
  [[ -n $ver ]] || { echo "tools: cannot read the pinned $mod version from .ci/tools/$dir/go.mod" >&2; exit 1; }
  stamp="$t $ver $go_version recipe=$recipe inputs=$(inputs_hash "$dir")"
  if [[ ${GATEHOUSE_TOOLS_FORCE:-0} != 1 && -x $bin/$t && -f $out/stamps/$t && $(<"$out/stamps/$t") == "$stamp" ]]; then
    summary+=("$(printf '%-24s %-10s %8s %8s  %s' "$t" "$ver" "cached" "-" "$(fmt_size "$bin/$t")")")
    continue
  fi
  echo "tools: building $t $ver (.ci/tools/$dir)"
  t0=$(date +%s.%N) c0=$(child_cpu)
  tmp=$(mktemp -d "$out/bin/.build-$t.XXXXXX")
  if ! (cd "$here/$dir" && go build -ldflags="-s -w$(tool_ldflags "$t" "$ver")" -o "$tmp/$t" "$pkg"); then
    rm -rf "$tmp"; echo "tools: building $t failed" >&2; exit 1
  fi
  mv -f "$tmp/$t" "$bin/$t" && rm -rf "$tmp"
  printf '%s\n' "$stamp" >"$out/stamps/$t"
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }')
  cpu=$(awk -v a="$c0" -v b="$(child_cpu)" 'BEGIN { printf "%.1fs", b - a }')
  echo "tools: built $t $ver in $secs (cpu $cpu, $(fmt_size "$bin/$t"))"
  summary+=("$(printf '%-24s %-10s %8s %8s  %s' "$t" "$ver" "$secs" "$cpu" "$(fmt_size "$bin/$t")")")
done
printf '%-24s %-10s %8s %8s  %s\n' tool version wall cpu size
printf '%s\n' "${summary[@]}"
echo "tools: done in $(awk -v a="$t_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1fs", b - a }') (cpu $(child_cpu)s); add to PATH: export PATH=\"$bin:\$PATH\""
