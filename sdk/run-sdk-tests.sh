#!/usr/bin/env bash
# Runs the Go and PHP server SDK suites: unit tests, the shared vectors (sdk/test-vectors) against fake
# hosts, and integration tests and docs examples (docs/sdk-go.md, docs/sdk-php.md) against a real main API
# that this script starts on a free port with a temporary DATA_DIR, a test-mode app and a headless solver.
#
#   bash sdk/run-sdk-tests.sh [go|php ...]      (default: both)
#   GO_TEST_FLAGS='-v -run Docs' PHPUNIT_FLAGS='--filter Docs' bash sdk/run-sdk-tests.sh
#
# Needs: go >= 1.22, php-cli >= 8.1 and phpunit (Debian: php-cli phpunit), and `npm install` done (the API
# runs on the repository's Node 24). Outside CI a missing tool skips its suite, loudly; with CI=true every
# missing tool is a failure, and so is every skipped test.
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
cleanup() {
  if [[ -n $API_PID ]]; then
    kill "$API_PID" 2>/dev/null || true
    wait "$API_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- The main API, an app and a solver, for the integration tests and the docs examples.
if [[ -x $REPO/node_modules/.bin/node ]]; then
  NODE=$REPO/node_modules/.bin/node
else
  NODE=
fi

free_port() { "$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

start_api() {
  local port fallback_port
  port=$(free_port)
  fallback_port=$(free_port)
  say "main API on 127.0.0.1:$port (DATA_DIR $WORK/data)"
  # The API publishes a fallback host the tests play themselves (GET /v1/standby discovery).
  (cd "$REPO" && exec env PORT="$port" HOST=127.0.0.1 DATA_DIR="$WORK/data" LOG_LEVEL=warn \
    STANDBY_FALLBACK_URLS="http://127.0.0.1:$fallback_port" STANDBY_BYPASS_URLS= \
    "$NODE" api/src/server.ts >"$WORK/api.log" 2>&1) &
  API_PID=$!
  local url="http://127.0.0.1:$port"
  for _ in $(seq 1 240); do
    if "$NODE" -e "fetch('$url/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" 2>/dev/null; then
      break
    fi
    if ! kill -0 "$API_PID" 2>/dev/null; then
      cat "$WORK/api.log" >&2
      return 1
    fi
    sleep 0.5
  done
  local cli=("$NODE" "$REPO/api/bin/gatehouse.js")
  DATA_DIR="$WORK/data" "${cli[@]}" app create --name sdk-tests --test-mode --url "$url" --json \
    >"$WORK/app.json" 2>"$WORK/app.err" || { cat "$WORK/app.err" >&2; return 1; }
  local key secret
  key=$("$NODE" -e "console.log(JSON.parse(require('fs').readFileSync('$WORK/app.json','utf8')).app_key)")
  secret=$("$NODE" -e "console.log(JSON.parse(require('fs').readFileSync('$WORK/app.json','utf8')).app_secret)")

  # The solver: `solve ACTION [SERVER_TOKEN]` prints a fresh pass token of the test-mode app.
  if "${cli[@]}" solve --help >/dev/null 2>&1; then
    cat >"$WORK/solve" <<EOF
#!/usr/bin/env bash
exec "$NODE" "$REPO/api/bin/gatehouse.js" solve --app-key "$key" --action "\$1" --url "$url" \${2:+--server-token "\$2"} 2>/dev/null
EOF
  else
    echo "'gatehouse solve' is missing: solving through @gatehouse/node/headless instead" >&2
    cat >"$WORK/solve" <<EOF
#!/usr/bin/env bash
cd "$REPO" && exec "$NODE" --input-type=module -e "
import { solveChallenge } from '@gatehouse/node/headless';
const [action, serverToken] = process.argv.slice(1);
const r = await solveChallenge({ baseUrl: '$url', appKey: '$key', action, ...(serverToken ? { serverToken } : {}) });
console.log(r.passToken);" "\$1" "\${2:-}"
EOF
  fi
  chmod +x "$WORK/solve"
  "$WORK/solve" login >/dev/null || { echo 'the solver cannot mint a pass token' >&2; return 1; }

  export GATEHOUSE_TEST_URL=$url GATEHOUSE_TEST_APP_KEY=$key GATEHOUSE_TEST_APP_SECRET=$secret
  export GATEHOUSE_TEST_SOLVER=$WORK/solve GATEHOUSE_TEST_FALLBACK_PORT=$fallback_port
  echo "app $key (test mode); solver $WORK/solve"
}

if [[ -z $NODE ]]; then
  skip 'integration tests: node_modules/.bin/node is missing (run npm install)'
elif ! start_api; then
  echo 'FAIL: the main API did not start or no app could be created' >&2
  FAILED+=('main API')
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
  # shellcheck disable=SC2086
  (cd "$REPO/sdk/php" && phpunit ${PHPUNIT_FLAGS:-}) || FAILED+=('PHP SDK')
}

for suite in "${SUITES[@]}"; do
  case $suite in
    go) run_go ;;
    php) run_php ;;
    *) echo "unknown suite '$suite'; the suites are go and php" >&2; exit 2 ;;
  esac
done

say 'summary'
((${#SKIPPED[@]} == 0)) || printf '!! SKIPPED: %s\n' "${SKIPPED[@]}"
if ((${#FAILED[@]})); then
  printf 'FAILED: %s\n' "${FAILED[@]}"
  exit 1
fi
echo 'all SDK suites passed'
