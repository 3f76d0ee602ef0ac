#!/usr/bin/env bash
# Build the pinned Go toolchain (etcd, the Kubernetes control plane and node, helm, kubeconform, k6)
# into ${GATEHOUSE_TOOLS_DIR:-.cache/tools}/bin. Usage: bash .ci/tools.sh [tool|all|control-plane ...]
# Details: .ci/tools/build.sh and docs/toolchain.md.
exec bash "$(dirname "${BASH_SOURCE[0]}")/tools/build.sh" "$@"
