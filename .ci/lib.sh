# Helpers for .ci/run: section headers with timings, Debian packages, PostgreSQL and Redis on 127.0.0.1.
# Sourced, not executed. Every function is idempotent: safe on a fresh CI machine and on a dev machine
# where the packages are installed and the servers may already be running.

CI_STARTED_AT=$(date +%s)
CI_SECTION_NAME=''
CI_SECTION_STARTED_AT=0
CI_TIMINGS=()

# Starts a named section; closes the previous one and records its duration.
section() {
  section_end
  CI_SECTION_NAME=$1
  CI_SECTION_STARTED_AT=$(date +%s)
  printf '\n\033[1m==> %s\033[0m  (%s)\n' "$CI_SECTION_NAME" "$(date -u +%H:%M:%SZ)"
}

section_end() {
  [[ -n $CI_SECTION_NAME ]] || return 0
  local took=$(($(date +%s) - CI_SECTION_STARTED_AT))
  CI_TIMINGS+=("$(printf '%5ss  %s' "$took" "$CI_SECTION_NAME")")
  printf '\033[2m<== %s: %ss\033[0m\n' "$CI_SECTION_NAME" "$took"
  CI_SECTION_NAME=''
}

# Prints every section's duration and the total; called on exit, whatever the outcome.
timings_summary() {
  local status=$?
  section_end
  printf '\n\033[1m==> Timings\033[0m\n'
  printf '%s\n' "${CI_TIMINGS[@]}"
  printf '%5ss  total (exit status %s)\n' "$(($(date +%s) - CI_STARTED_AT))" "$status"
  return "$status"
}

die() {
  printf '\033[31mERROR: %s\033[0m\n' "$*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# Runs a command as the user that owns the PostgreSQL data (root may not run postgres).
as_pg_owner() {
  if [[ $EUID -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Installs the Debian packages that are missing, with one apt-get update, and nothing when none is.
apt_install() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    echo "already installed: $*"
    return 0
  fi
  echo "installing: ${missing[*]}"
  # The Debian packages try to start their own servers; we start ours below, on our own terms.
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Polls `$@` until it succeeds, at most $WAIT_SECONDS (default 30) seconds.
wait_until() {
  local what=$1 deadline=$(($(date +%s) + ${WAIT_SECONDS:-30}))
  shift
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) < deadline)) || die "$what did not answer within ${WAIT_SECONDS:-30}s"
    sleep 0.2
  done
  echo "$what answers"
}

# The newest PostgreSQL server binaries Debian installed (/usr/lib/postgresql/<major>/bin).
pg_bindir() {
  local dir
  dir=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
  [[ -n $dir ]] || die 'no PostgreSQL server binaries under /usr/lib/postgresql'
  echo "$dir"
}

pg_answers() {
  pg_isready -q -h 127.0.0.1 -p "$PG_PORT" -U postgres
}

# Our server accepts the superuser `postgres` without a password over TCP (trust on loopback only).
pg_trusts_us() {
  psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -w -At -c 'select 1' 2>/dev/null | grep -qx 1
}

# A Debian cluster (pg_ctlcluster) already online on our port is stopped: its peer/password auth would
# reject the tests, and our own server takes the port.
stop_debian_cluster_on_port() {
  command -v pg_lsclusters >/dev/null || return 0
  local version name port status
  while read -r version name port status _; do
    if [[ $port == "$PG_PORT" && $status == online* ]]; then
      echo "stopping the Debian cluster $version/$name that holds port $PG_PORT"
      as_root pg_ctlcluster "$version" "$name" stop --mode fast
    fi
  done < <(pg_lsclusters --no-header 2>/dev/null)
}

# Initialises (once) and starts (unless running) a PostgreSQL server for tests in $PG_DATA on
# 127.0.0.1:$PG_PORT, trust authentication on loopback only, durability off (throwaway test data).
start_postgres() {
  local bin
  bin=$(pg_bindir)
  if pg_answers && pg_trusts_us; then
    echo "PostgreSQL already answers on 127.0.0.1:$PG_PORT and trusts user postgres: using it"
    return 0
  fi
  stop_debian_cluster_on_port
  if pg_answers; then
    die "something on 127.0.0.1:$PG_PORT speaks PostgreSQL but rejects user postgres without a password; stop it or set PG_PORT"
  fi
  as_root mkdir -p "$PG_DATA"
  [[ $EUID -ne 0 ]] || as_root chown postgres:postgres "$PG_DATA"
  as_root chmod 700 "$PG_DATA"
  if ! as_pg_owner test -r "$PG_DATA"; then
    die "the postgres user cannot reach $PG_DATA (a parent folder is not traversable); set CI_CACHE_DIR elsewhere"
  fi
  if [[ ! -s $PG_DATA/PG_VERSION ]]; then
    echo "initdb into $PG_DATA ($("$bin/postgres" --version))"
    as_pg_owner "$bin/initdb" -D "$PG_DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  fi
  echo "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  # TCP only (no Unix socket folder to prepare); fsync off: test data is disposable and CI wants speed.
  as_pg_owner "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 60 start -o \
    "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories='' -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    >/dev/null || { tail -n 30 "$PG_DATA/server.log" >&2; die 'PostgreSQL did not start'; }
}

redis_answers() {
  [[ $(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null) == PONG ]]
}

# Starts (unless one already answers) a daemonized redis-server on 127.0.0.1:$REDIS_PORT, no persistence.
start_redis() {
  if redis_answers; then
    echo "Redis already answers on 127.0.0.1:$REDIS_PORT: using it"
    return 0
  fi
  mkdir -p "$REDIS_DIR"
  echo "starting redis-server on 127.0.0.1:$REDIS_PORT"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$REDIS_DIR" \
    --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log" --save '' --appendonly no
}

# `npm ci`, which installs exactly the committed package-lock.json or fails. A lockfile npm ci refuses
# (out of sync with a package.json, e.g. platform packages of an optional dependency missing) fails the
# run with the fix spelled out: a fallback to `npm install` would make every install unreproducible.
npm_clean_install() {
  local log status=0
  log=$(mktemp)
  npm ci --no-audit --no-fund 2>&1 | tee "$log" || status=$?
  if ((status != 0)) && grep -q 'can only install packages when your package.json and package-lock.json' "$log"; then
    printf '\033[31m!!! npm ci refused package-lock.json (out of sync, see above). Regenerate it with\n' >&2
    printf '    npm install --package-lock-only   (on a registry serving every platform package) and commit it.\033[0m\n' >&2
  fi
  rm -f "$log"
  return "$status"
}
