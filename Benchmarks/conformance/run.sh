#!/usr/bin/env bash
# Runs the outside HTTP-cache conformance suite (http-tests/cache-tests, the one
# whose results grade nginx, Varnish, Squid, Traffic Server, Apache and Caddy
# against RFC 9111) against reverse proxies on loopback, and summarises it.
#
#   Benchmarks/conformance/run.sh [--nginx] [--stash BIN] [--id TEST-ID] [--out DIR]
#                                 [--report FILE [--note TEXT]]
#
#   --nginx        measure nginx (apt's, `proxy_cache` as configured below), as a
#                  private instance (`nginx -p DIR`) on 127.0.0.1
#   --stash BIN    measure `BIN serve --origin ... --listen 127.0.0.1:PORT --dir D`
#                  (local tiers only), e.g. .build/debug/stash from a build with
#                  `--traits Serve`
#                  (with neither flag: --nginx, plus --stash "$STASH_BIN" if set)
#   --id TEST-ID   run one test with the client's request/response dump (debugging)
#   --out DIR      where results go (default Benchmarks/out/conformance)
#   --report FILE  also prepend this run's failing tests (markdown, newest run
#                  first) to FILE, headed by the time and --note
#   --note TEXT    what stash build was measured, for the report's heading (e.g. its
#                  commit); nginx's heading names its version and configuration
#
# Environment:
#   CACHE_TESTS_DIR   the suite's directory (default /work/cache-tests): it must
#                     hold test-engine/{cli.mjs,server/server.mjs} and tests/index.mjs.
#                     The suite is third-party code and is never committed here; get it
#                     with `git clone https://github.com/http-tests/cache-tests` and
#                     `npm install` in it (its client needs node >= 18 and the
#                     node-fetch-with-proxy package).
#   NGINX_REVALIDATE  1 adds `proxy_cache_revalidate on` to the nginx config
#                     (default 0: nginx's defaults, as in the issue's table)
#   STASH_ARGS        extra arguments for `stash serve` (e.g. --shared postgres://...)
#
# Output: for each proxy, OUT/<proxy>.json (the client's raw results),
# OUT/<proxy>.md (failing tests with the suite's description and RFC section),
# and one line "<proxy>: N passed, N failed, N required failures" on stdout,
# followed by the failing test ids. Everything it starts (the suite's origin
# server, nginx, stash) is stopped on exit, whatever happens.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench_dir="$(dirname "$here")"
suite="${CACHE_TESTS_DIR:-/work/cache-tests}"
out="$bench_dir/out/conformance"
run_nginx=0
stash_bin=""
test_id=""
report=""
note=""

while [ $# -gt 0 ]; do
  case "$1" in
    --nginx) run_nginx=1; shift ;;
    --stash) stash_bin="${2:?--stash needs the path of a stash binary}"; shift 2 ;;
    --id) test_id="${2:?--id needs a test id}"; shift 2 ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --report) report="${2:?--report needs a file}"; shift 2 ;;
    --note) note="${2:?--note needs a text}"; shift 2 ;;
    -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$run_nginx" = 0 ] && [ -z "$stash_bin" ]; then
  run_nginx=1
  stash_bin="${STASH_BIN:-}"
fi

if [ ! -f "$suite/test-engine/cli.mjs" ] || [ ! -f "$suite/test-engine/server/server.mjs" ] \
   || [ ! -f "$suite/tests/index.mjs" ]; then
  cat >&2 <<EOF
run.sh: the conformance suite is not at '$suite'.
  It is third-party code (http-tests/cache-tests) and is not part of this repository.
  Get it with:  git clone https://github.com/http-tests/cache-tests "$suite"
                (cd "$suite" && npm install)
  or point CACHE_TESTS_DIR at a copy that has test-engine/ and tests/.
EOF
  exit 2
fi
command -v node >/dev/null || { echo "run.sh: node (>= 18) is needed to run the suite" >&2; exit 2; }
# The client imports `undici` to collect interim (1xx) responses. Without a real one (no npm
# registry here), undici-shim/ stands in: Node's own fetch, with the suite's interceptor fed
# every head it receives, so the interim-* tests measure the proxy (see undici-shim/index.mjs).
if [ ! -f "$suite/node_modules/undici/package.json" ] \
   || grep -q -- '"0.0.0-st' "$suite/node_modules/undici/package.json"; then
  mkdir -p "$suite/node_modules/undici"
  cp "$here/undici-shim/package.json" "$here/undici-shim/index.mjs" "$suite/node_modules/undici/"
fi
if [ -n "$stash_bin" ] && [ ! -x "$stash_bin" ]; then
  echo "run.sh: '$stash_bin' is not an executable stash binary (build one with: swift build --traits Serve)" >&2
  exit 2
fi
if [ "$run_nginx" = 1 ] && ! command -v nginx >/dev/null; then
  echo "run.sh: nginx is not installed (apt-get install nginx-light), or leave out --nginx" >&2
  exit 2
fi

mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/stash-conformance.XXXXXX")"
chmod 755 "$work" # nginx's workers run unprivileged and must reach their cache
pids=()
cleanup() {
  for pid in "${pids[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]:-}"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits until something accepts connections on 127.0.0.1:$1, or fails after 30 s
# (or at once when the process $2 has exited).
wait_port() {
  local port="$1" pid="$2" i
  for i in $(seq 1 300); do
    if python3 -c "import socket,sys; s=socket.socket(); s.settimeout(0.2); sys.exit(s.connect_ex(('127.0.0.1', $port)))" 2>/dev/null; then
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      return 1
    fi
    sleep 0.1
  done
  return 1
}

# The suite's test list, with what summarize.py needs (kind, dependencies, spec anchors).
meta="$out/tests-meta.json"
(cd "$suite" && node --input-type=module -e "
  const { default: suites } = await import('./tests/index.mjs')
  const out = []
  for (const suite of suites) {
    for (const t of suite.tests) {
      out.push({ id: t.id, name: t.name, kind: t.kind, depends_on: t.depends_on,
        spec_anchors: t.spec_anchors, suite: suite.id, suite_anchors: suite.spec_anchors,
        browser_only: t.browser_only === true })
    }
  }
  process.stdout.write(JSON.stringify(out))
") > "$meta"

# The suite's origin server: every test's responses come from it.
origin_port="$(free_port)"
(cd "$suite" && exec env npm_config_protocol=http npm_config_port="$origin_port" \
  npm_config_host=127.0.0.1 npm_config_pidfile="$work/origin.pid" \
  node test-engine/server/server.mjs) > "$work/origin.log" 2>&1 &
origin_pid=$!
pids+=("$origin_pid")
if ! wait_port "$origin_port" "$origin_pid"; then
  echo "run.sh: the suite's origin server did not start:" >&2
  cat "$work/origin.log" >&2
  exit 1
fi

# Runs the suite's client against http://127.0.0.1:$2 and summarises it as $1.
# $3 describes what was measured, for the report's heading.
run_suite() {
  local label="$1" port="$2" what="$3"
  echo "== $label: running the suite against http://127.0.0.1:$port (origin on $origin_port)" >&2
  local started=$SECONDS
  (cd "$suite" && env npm_config_base="http://127.0.0.1:$port" npm_config_id="$test_id" npm_package_config_id= \
    node --no-warnings test-engine/cli.mjs) > "$out/$label.json" 2> "$out/$label.stderr" || {
    echo "run.sh: the suite's client failed for $label:" >&2
    tail -20 "$out/$label.stderr" >&2
    return 1
  }
  echo "== $label: done in $((SECONDS - started)) s" >&2
  if [ -n "$test_id" ]; then
    cat "$out/$label.json"
    return 0
  fi
  local report_args=()
  if [ -n "$report" ]; then report_args=(--report "$report" --note "$what"); fi
  python3 "$here/summarize.py" --meta "$meta" --label "$label" --markdown "$out/$label.md" \
    "${report_args[@]}" "$out/$label.json"
  python3 "$here/summarize.py" --meta "$meta" --label "$label" --json "$out/$label.json" > "$out/$label.figures.json"
}

status=0

if [ "$run_nginx" = 1 ]; then
  nginx_dir="$work/nginx"
  mkdir -p "$nginx_dir/conf" "$nginx_dir/logs" "$nginx_dir/cache" "$nginx_dir/tmp"
  chmod 777 "$nginx_dir/cache" "$nginx_dir/tmp"
  nginx_port="$(free_port)"
  revalidate=""
  if [ "${NGINX_REVALIDATE:-0}" = 1 ]; then revalidate="proxy_cache_revalidate on;"; fi
  cat > "$nginx_dir/conf/nginx.conf" <<EOF
# A caching reverse proxy with nginx's default proxy_cache behaviour.
worker_processes 1;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $nginx_dir/tmp/body;
  proxy_temp_path $nginx_dir/tmp/proxy;
  fastcgi_temp_path $nginx_dir/tmp/fastcgi;
  uwsgi_temp_path $nginx_dir/tmp/uwsgi;
  scgi_temp_path $nginx_dir/tmp/scgi;
  proxy_cache_path $nginx_dir/cache levels=1:2 keys_zone=conformance:8m max_size=100m inactive=600m;
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      proxy_pass http://127.0.0.1:$origin_port;
      proxy_cache conformance;
      proxy_http_version 1.1;
      $revalidate
    }
  }
}
EOF
  nginx -p "$nginx_dir" -e "$nginx_dir/logs/error.log" -c "$nginx_dir/conf/nginx.conf" -g 'daemon off;' \
    > "$nginx_dir/logs/stdout.log" 2>&1 &
  nginx_pid=$!
  pids+=("$nginx_pid")
  if wait_port "$nginx_port" "$nginx_pid"; then
    nginx_version="$(nginx -v 2>&1 | sed 's|.*nginx/||')"
    run_suite nginx "$nginx_port" "nginx $nginx_version, proxy_cache${revalidate:+ + proxy_cache_revalidate}" || status=1
  else
    echo "run.sh: nginx did not start:" >&2
    cat "$nginx_dir/logs/stdout.log" "$nginx_dir/logs/error.log" >&2 || true
    status=1
  fi
  kill "$nginx_pid" 2>/dev/null || true
  wait "$nginx_pid" 2>/dev/null || true
fi

if [ -n "$stash_bin" ]; then
  stash_dir="$work/stash"
  mkdir -p "$stash_dir"
  stash_port="$(free_port)"
  # shellcheck disable=SC2086 # STASH_ARGS is a list of arguments
  "$stash_bin" serve --origin "http://127.0.0.1:$origin_port" --listen "127.0.0.1:$stash_port" \
    --dir "$stash_dir/cache" ${STASH_ARGS:-} > "$stash_dir/serve.log" 2>&1 &
  stash_pid=$!
  pids+=("$stash_pid")
  if wait_port "$stash_port" "$stash_pid"; then
    run_suite stash "$stash_port" "$note" || status=1
  else
    echo "run.sh: stash serve did not start:" >&2
    cat "$stash_dir/serve.log" >&2
    status=1
  fi
  kill "$stash_pid" 2>/dev/null || true
  wait "$stash_pid" 2>/dev/null || true
fi

exit "$status"
