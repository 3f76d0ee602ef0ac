#!/usr/bin/env bash
# Runs the Go and PHP server SDK suites: unit tests, the shared vectors (sdk/test-vectors) against fake
# hosts, and integration tests and docs examples (docs/sdk-go.md, docs/sdk-php.md) against a real main API
# and a real standby (both roles), which this script starts on free ports with a temporary DATA_DIR, a
# test-mode app and a headless solver. The main API publishes two fallback hosts at GET /v1/standby: a
# port the tests play themselves (nothing listens there otherwise: a host that is down), then the real
# standby's. The shared store is TEST_REDIS_URL when set (.ci/run sets it), else each process's memory.
#
#   bash sdk/run-sdk-tests.sh [go|php ...]      (default: both)
#   GO_TEST_FLAGS='-v -run Docs' PHPUNIT_FLAGS='--filter Docs' bash sdk/run-sdk-tests.sh
#
# Needs: go >= 1.22, php-cli >= 8.1 and phpunit (Debian: php-cli phpunit), and `npm install` done (the
# services run on the repository's Node 24). Outside CI a missing tool skips its suite, loudly; with
# CI=true every missing tool is a failure, and so is every skipped test.
set -Eeuo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITES=("${@:-go php}")
read -r -a SUITES <<<"${SUITES[*]}"
CI=${CI:-}
FAILED=()
SKIPPED=()

say() { printf '\n== %s\n' "$*"; }
skip() {
  # Outside CI: skip loudly. Under CI=true: a missing tool is a failure.
  if [[ $CI == true ]]; then
    printf 'FAIL: %s (CI=true: nothing may be skipped)\n' "$1" >&2
    FAILED+=("$1")
  else
    printf '\n!! SKIPPED: %s\n' "$1" >&2
    SKIPPED+=("$1")
  fi
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-sdk-tests.XXXXXX")
API_PID=
STANDBY_PID=
cleanup() {
  local pid
  for pid in $STANDBY_PID $API_PID; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- The main API, the standby, an app and a solver, for the integration tests and the docs examples.
if [[ -x $REPO/node_modules/.bin/node ]]; then
  NODE=$REPO/node_modules/.bin/node
else
  NODE=
fi

free_port() { "$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# wait_ready URL PID LOG: until URL answers 2xx; fails (showing LOG) when PID dies or after 120 s.
wait_ready() {
  for _ in $(seq 1 240); do
    if "$NODE" -e "fetch('$1').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$2" 2>/dev/null; then
      cat "$3" >&2
      return 1
    fi
    sleep 0.5
  done
  echo "no answer from $1 after 120 s" >&2
  return 1
}

json_field() { "$NODE" -e "console.log(JSON.parse(require('fs').readFileSync('$1','utf8'))['$2'])"; }

start_services() {
  local port fake_port bypass_port fallback_port store=${TEST_REDIS_URL:-}
  port=$(free_port)
  fake_port=$(free_port)
  bypass_port=$(free_port)
  fallback_port=$(free_port)
  local url=http://127.0.0.1:$port bypass=http://127.0.0.1:$bypass_port fallback=http://127.0.0.1:$fallback_port
  say "main API on $url (DATA_DIR $WORK/data)"
  # The suites present forged tokens and wrong secrets on purpose, all from 127.0.0.1: no throttling.
  (cd "$REPO" && exec env PORT="$port" HOST=127.0.0.1 DATA_DIR="$WORK/data" LOG_LEVEL=warn \
    AUTH_FAILURES_PER_SOURCE_AND_KEY=1000000 AUTH_FAILURES_PER_SOURCE=1000000 AUTH_FAILURES_PER_KEY=1000000 \
    AUTH_TOKEN_FAILURES_PER_SOURCE_AND_APP=1000000 \
    STANDBY_FALLBACK_URLS="http://127.0.0.1:$fake_port,$fallback" STANDBY_BYPASS_URLS="$bypass" \
    STANDBY_STORE_URL="$store" "$NODE" api/src/server.ts >"$WORK/api.log" 2>&1) &
  API_PID=$!
  wait_ready "$url/readyz" "$API_PID" "$WORK/api.log" || return 1

  DATA_DIR="$WORK/data" "$NODE" "$REPO/api/bin/gatehouse.js" app create --name sdk-tests --test-mode \
    --url "$url" --json >"$WORK/app.json" 2>"$WORK/app.err" || { cat "$WORK/app.err" >&2; return 1; }
  export GATEHOUSE_TEST_URL=$url GATEHOUSE_TEST_FALLBACK_PORT=$fake_port
  GATEHOUSE_TEST_APP_KEY=$(json_field "$WORK/app.json" app_key)
  GATEHOUSE_TEST_APP_SECRET=$(json_field "$WORK/app.json" app_secret)
  export GATEHOUSE_TEST_APP_KEY GATEHOUSE_TEST_APP_SECRET

  # The standby, started once the app exists, so that its first snapshot holds it.
  if [[ -f $REPO/standby/src/server.ts ]]; then
    say "standby: bypass $bypass, fallback $fallback (shared store: ${store:-none, memory})"
    (cd "$REPO" && exec env STANDBY_ROLE=both STANDBY_HOST=127.0.0.1 STANDBY_BYPASS_PORT="$bypass_port" \
      STANDBY_FALLBACK_PORT="$fallback_port" MAIN_API_URL="$url" STANDBY_DATA_DIR="$WORK/data/standby" \
      STANDBY_STORE_URL="$store" STANDBY_PROBE_INTERVAL_MS=200 LOG_LEVEL=warn \
      "$NODE" standby/src/server.ts >"$WORK/standby.log" 2>&1) &
    STANDBY_PID=$!
    wait_ready "$fallback/readyz" "$STANDBY_PID" "$WORK/standby.log" || return 1
    export GATEHOUSE_TEST_STANDBY_URL=$fallback GATEHOUSE_TEST_BYPASS_URL=$bypass
    export GATEHOUSE_TEST_STANDBY_TOKEN_FILE=$WORK/data/admin-token
    [[ -z $store ]] || export GATEHOUSE_TEST_SHARED_STORE=1
  else
    skip 'real standby: standby/src/server.ts is missing'
  fi

  # The solver: `solve ACTION [SERVER_TOKEN]` prints a fresh pass token of the test-mode app, solved on
  # the main API (`gatehouse solve`); `solve --offline ACTION` an offline_ token solved on the standby's
  # bypass host, the main API being given as a host that is down (the standby must be serving: the tests
  # switch its mode). It reads the GATEHOUSE_TEST_* variables the tests inherit.
  export GATEHOUSE_TEST_NODE=$NODE GATEHOUSE_TEST_REPO=$REPO
  cat >"$WORK/solve" <<'SOLVER'
#!/usr/bin/env bash
set -euo pipefail
cd "$GATEHOUSE_TEST_REPO"
if [[ $1 == --offline ]]; then
  exec "$GATEHOUSE_TEST_NODE" --input-type=module -e "
import { solveChallenge } from '@gatehouse/node/headless';
const env = process.env;
const r = await solveChallenge({ baseUrl: 'http://127.0.0.1:' + env.GATEHOUSE_TEST_FALLBACK_PORT,
  bypassServers: [env.GATEHOUSE_TEST_BYPASS_URL], appKey: env.GATEHOUSE_TEST_APP_KEY,
  action: process.argv[1], clientOnlyFallback: false });
console.log(r.passToken);" "$2"
fi
exec "$GATEHOUSE_TEST_NODE" api/bin/gatehouse.js solve --app-key "$GATEHOUSE_TEST_APP_KEY" --action "$1" \
  --url "$GATEHOUSE_TEST_URL" ${2:+--server-token "$2"} 2>/dev/null
SOLVER
  chmod +x "$WORK/solve"
  export GATEHOUSE_TEST_SOLVER=$WORK/solve
  [[ $("$WORK/solve" login) == pt_* ]] || { echo 'the solver cannot mint a pass token' >&2; return 1; }
  echo "app $GATEHOUSE_TEST_APP_KEY (test mode); solver $WORK/solve"
}

if [[ -z $NODE ]]; then
  skip 'integration tests: node_modules/.bin/node is missing (run npm install)'
elif ! start_services; then
  echo 'FAIL: the main API or the standby did not start, or no app could be created' >&2
  FAILED+=('services')
fi

# --- Go
run_go() {
  if ! command -v go >/dev/null; then
    skip 'Go SDK: go is not installed'
    return
  fi
  say "Go SDK: $(go version)"
  # shellcheck disable=SC2086 # GO_TEST_FLAGS is a list of flags
  (cd "$REPO/sdk/go" && go vet ./... && go test -count=1 ${GO_TEST_FLAGS:-} ./...) || FAILED+=('Go SDK')
}

# --- PHP
run_php() {
  if ! command -v php >/dev/null; then
    skip 'PHP SDK: php is not installed (Debian: php-cli)'
    return
  fi
  if ! command -v phpunit >/dev/null; then
    skip 'PHP SDK: phpunit is not installed (Debian: phpunit)'
    return
  fi
  say "PHP SDK: $(php -r 'echo PHP_VERSION;'), $(phpunit --version | head -1)"
  local lint=0
  while IFS= read -r -d '' file; do
    php -l "$file" >/dev/null || lint=1
  done < <(find "$REPO/sdk/php" -name '*.php' -print0)
  ((lint == 0)) || FAILED+=('PHP lint')
  # shellcheck disable=SC2086 # PHPUNIT_FLAGS is a list of flags
  (cd "$REPO/sdk/php" && phpunit ${PHPUNIT_FLAGS:-}) || FAILED+=('PHP SDK')
}

for suite in "${SUITES[@]}"; do
  case $suite in
    go) run_go ;;
    php) run_php ;;
    *)
      echo "unknown suite '$suite'; the suites are go and php" >&2
      exit 2
      ;;
  esac
done

say 'summary'
((${#SKIPPED[@]} == 0)) || printf '!! SKIPPED: %s\n' "${SKIPPED[@]}"
if ((${#FAILED[@]})); then
  printf 'FAILED: %s\n' "${FAILED[@]}"
  exit 1
fi
echo 'all SDK suites passed'
