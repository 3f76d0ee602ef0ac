#!/usr/bin/env bash
# Runs one k6 scenario against the local stack, starting it when it is not up.
#
#   loadtest/run.sh <validate|challenge|issuance|soak|failover> [--short] [extra k6 args...]
#
# --short: the CI form (seconds, not minutes). PROFILE, RATE, SOAK_DURATION, DRILL (one|all),
# KILL_AT, OUTAGE pass through to the scenario. Against another target: BASE_URL, APP_KEY, APP_SECRET
# (no stack is started; failover needs the stack). Stack size: STACK_REGIONS, STACK_INSTANCES.
# Exit codes: k6's (99 = thresholds failed). JSON summaries: loadtest/results/<scenario>.json.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
scenario=${1:?usage: loadtest/run.sh <validate|challenge|issuance|soak|failover> [--short]}
shift
short=0
if [[ ${1:-} == --short ]]; then
  short=1
  shift
fi
script=$here/scenarios/$scenario.js
[[ -f $script ]] || { echo "run.sh: no scenario $scenario (loadtest/scenarios/*.js)" >&2; exit 2; }

# K6, else the build of .ci/tools.sh (GATEHOUSE_TOOLS_DIR, default .cache/tools), else PATH.
k6=${K6:-${GATEHOUSE_TOOLS_DIR:-$repo/.cache/tools}/bin/k6}
if [[ ! -x $k6 ]]; then
  k6=$(command -v k6 || true)
  [[ -n $k6 ]] || { echo "run.sh: k6 not found: build it with 'nice bash .ci/tools.sh k6'" >&2; exit 2; }
fi

# Node 24 from the repo (npm's node@24 package); the machine's node may be older.
node=$repo/node_modules/.bin/node
[[ -x $node ]] || node=node

base_port=${STACK_BASE_PORT:-18000}
endpoints=${ENDPOINTS:-$here/.stack/endpoints.json}
stack_pid=
cleanup() {
  if [[ -n $stack_pid ]]; then
    kill -TERM "$stack_pid" 2>/dev/null || true
    wait "$stack_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

if [[ -z ${BASE_URL:-} ]]; then
  # Up already (someone ran `npm run stack`)? Its control port answers.
  if ! curl -fsS -m 2 "http://127.0.0.1:$((base_port + 99))/status" >/dev/null 2>&1; then
    mkdir -p "$here/.stack"
    log=$here/.stack/stack.log
    echo "run.sh: starting the stack (log: $log)"
    # stdin from /dev/null: the stack keeps serving when its stdin closes.
    "$node" "$here/stack/main.ts" --regions "${STACK_REGIONS:-2}" --instances "${STACK_INSTANCES:-2}" \
      --base-port "$base_port" --out "$endpoints" </dev/null >"$log" 2>&1 &
    stack_pid=$!
    for _ in $(seq 1 600); do
      grep -q '^stack: ready' "$log" 2>/dev/null && break
      if ! kill -0 "$stack_pid" 2>/dev/null; then
        cat "$log" >&2
        exit 1
      fi
      sleep 0.2
    done
    grep -q '^stack: ready' "$log" || { echo "run.sh: the stack did not start in 120 s" >&2; cat "$log" >&2; exit 1; }
    sed -n '/^stack:/,$p' "$log"
  fi
fi

mkdir -p "$here/results"
args=(-e "SHORT=$short" -e "SUMMARY_DIR=$here/results")
[[ -z ${BASE_URL:-} ]] && args+=(-e "ENDPOINTS=$endpoints")
cd "$repo"
set +e
"$k6" run --quiet "${args[@]}" "$@" "$script"
rc=$?
set -e
echo "run.sh: $scenario exited $rc"
exit $rc
