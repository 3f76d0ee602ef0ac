#!/usr/bin/env bash
# Build the api, standby and operator images from the Dockerfile's targets with buildah, without a registry, and
# write each as a docker-archive that `ctr -n k8s.io images import` (or `docker load`) accepts.
#
#   bash loadtest/cluster/images.sh [api|standby|operator|pause ...]    (default: all four)
#
# Output: .cache/cluster/images/<name>.tar holding localhost/gatehouse/<name>:0.0.0-dev (CLUSTER_IMAGE_TAG), and
# pause.tar holding localhost/pause:local, the pods' sandbox: Debian's static catatonit, as `catatonit -P`.
# The Dockerfile starts FROM node:24-slim. Where Docker Hub cannot be reached, that base is made here from
# the same parts: Debian 12 (debootstrap --variant=minbase), the Node 24 binary of the repository's `node`
# package, npm, and a `node` user 1000:1000; it is built once and kept in .cache/cluster. Set
# CLUSTER_BASE_PULL=1 to pull the real node:24-slim instead. buildah keeps its storage under
# .cache/cluster/containers (nothing in /var/lib/containers); `npm ci` in the Dockerfile reads the host's
# npm cache through an overlay, so it does not write to it.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${CLUSTER_CACHE_DIR:-$repo/.cache/cluster}
tag=${CLUSTER_IMAGE_TAG:-0.0.0-dev}
mkdir -p "$work/images" "$work/containers"
work=$(cd "$work" && pwd)
(($# == 0)) && set -- api standby operator pause

# buildah as root with its own storage. The default ulimits are set because containers here may not raise
# RLIMIT_NOFILE/NPROC above the machine's hard limits (no CAP_SYS_RESOURCE).
conf=$work/containers/containers.conf
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' >"$conf"
export CONTAINERS_CONF=$conf
bh() { buildah --root "$work/containers/storage" --runroot "$work/containers/run" --storage-driver overlay "$@"; }

t0=$(date +%s)
log() { echo "images: +$(($(date +%s) - t0))s $*"; }

if [[ " $* " == *" pause "* ]]; then
  c=$(bh from scratch)
  bh copy "$c" /usr/bin/catatonit /pause >/dev/null
  bh config --entrypoint '["/pause", "-P"]' "$c"
  bh commit --quiet --rm "$c" localhost/pause:local >/dev/null
  rm -f "$work/images/pause.tar"
  bh push --quiet localhost/pause:local "docker-archive:$work/images/pause.tar:localhost/pause:local" >/dev/null
  log "localhost/pause:local -> $work/images/pause.tar"
  set -- $(printf '%s\n' "$@" | grep -vx pause)
  (($# > 0)) || exit 0
fi

base=docker.io/library/node:24-slim
if [[ ${CLUSTER_BASE_PULL:-0} == 1 ]]; then
  bh pull "$base" >/dev/null
elif ! bh inspect --type image "$base" >/dev/null 2>&1; then
  rootfs=$work/base-rootfs
  if [[ ! -x $rootfs/usr/local/bin/node ]]; then
    # The repository's Node (the `node` package puts its binary in node_modules/node/bin after install);
    # never the machine's own node, whose major version may not be the Dockerfile's 24.
    node_bin=$(cd "$repo" && npx --no-install node -e 'process.stdout.write(process.execPath)')
    [[ $("$node_bin" --version) == v24.* ]] ||
      { echo "images: $node_bin is $("$node_bin" --version), not Node 24: run npm ci first" >&2; exit 1; }
    npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
    # A finished debootstrap removes its /debootstrap folder: reuse such a tree, redo an interrupted one.
    if [[ ! -f $rootfs.tmp/etc/debian_version || -d $rootfs.tmp/debootstrap || -e $rootfs.tmp/usr/local/bin/node ]]; then
      rm -rf "$rootfs.tmp"
      log "debootstrap bookworm (minbase) for the node:24-slim base"
      debootstrap --variant=minbase bookworm "$rootfs.tmp" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 ||
        { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
    fi
    install -D -m 0755 "$node_bin" "$rootfs.tmp/usr/local/bin/node"
    mkdir -p "$rootfs.tmp/usr/local/lib/node_modules" && cp -a "$npm_dir" "$rootfs.tmp/usr/local/lib/node_modules/npm"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs.tmp/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs.tmp/usr/local/bin/npx"
    chroot "$rootfs.tmp" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
    rm -rf "$rootfs.tmp"/var/lib/apt/lists/* "$rootfs.tmp"/var/cache/apt/*.bin
    mv "$rootfs.tmp" "$rootfs"
  fi
  log "importing the base as $base"
  c=$(bh from scratch)
  mnt=$(bh mount "$c") && cp -a "$rootfs/." "$mnt/" && bh umount "$c" >/dev/null
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env NODE_VERSION="$("$rootfs/usr/local/bin/node" --version)" \
    --cmd node "$c"
  bh commit --quiet --rm "$c" "$base" >/dev/null
fi

# The machine's CA bundle, read-only, for the build's RUN steps, and an npm configuration that makes npm use
# it (nothing of either is kept in an image): where a proxy re-signs TLS, as on the machines this runs on,
# npm inside the build trusts what the host trusts. Without it npm retries the registry for minutes, then
# falls back to its cache.
trust=()
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$work/containers/npmrc"
  trust=(--volume /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro
    --volume "$work/containers/npmrc:/usr/local/etc/npmrc:ro")
fi

for name in "$@"; do
  case $name in api | standby | operator) ;; *) echo "images: unknown image '$name' (api, standby, operator)" >&2; exit 2 ;; esac
  image=localhost/gatehouse/$name:$tag
  log "building $image from the Dockerfile's $name target"
  # Docker's image format, as `docker build` makes it: OCI's has no HEALTHCHECK and buildah would drop it.
  bh bud --quiet --pull-never --isolation chroot --layers --format docker \
    --volume "$HOME/.npm:/root/.npm:O" "${trust[@]}" \
    -f "$repo/Dockerfile" --target "$name" -t "$image" "$repo" >"$work/images/$name.build.log" 2>&1 ||
    { tail -n 30 "$work/images/$name.build.log" >&2; exit 1; }
  # The archive is rewritten only when the image changed: the cluster re-imports an archive that did.
  id=$(bh inspect --type image --format '{{.FromImageID}}' "$image")
  if [[ -f $work/images/$name.tar && -f $work/images/$name.id && $(<"$work/images/$name.id") == "$id" ]]; then
    log "$image unchanged (${id:0:12})"
    continue
  fi
  rm -f "$work/images/$name.tar"
  bh push --quiet "$image" "docker-archive:$work/images/$name.tar:$image" >/dev/null
  echo "$id" >"$work/images/$name.id"
  log "$image -> $work/images/$name.tar ($(du -h "$work/images/$name.tar" | cut -f1), ${id:0:12})"
done
