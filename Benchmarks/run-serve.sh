#!/usr/bin/env bash
# Cached hits per second: `stash serve` against nginx proxy_cache, both in front of one nginx origin
# (issues 31, 32). Drives each proxy with wrk (64 connections) for cached 1 KiB and 64 KiB bodies, in
# interleaved rounds, and prints a markdown table of the medians (requests/s, p50, p99, CPU per request).
#
#   Benchmarks/run-serve.sh [--rounds N] [--duration SECONDS] [--connections N] [--write-readme]
#
#   --rounds N        interleaved rounds (default 3)
#   --duration S      seconds per wrk run (default 10)
#   --connections N   wrk connections (default 64)
#   --write-readme    replace the "## stash serve (issues 31, 32)" section of Benchmarks/README.md
#
# Needs nginx and wrk (apt-get install nginx wrk). Builds `stash` in release with the Serve trait.
# Each run also reports the proxy's CPU time (user + system, from /proc) per request, which outside
# load disturbs less than requests per second. Both proxies log every request to a file with a 64 KiB
# buffer, and run one worker per core (nginx `worker_processes auto`, stash's default event-loop count).
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$bench_dir")"
rounds=3
duration=10
connections=64
write_readme=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --duration) duration="$2"; shift ;;
        --connections) connections="$2"; shift ;;
        --write-readme) write_readme=1 ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "run-serve.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
for tool in nginx wrk; do
    command -v "$tool" >/dev/null || { echo "run-serve.sh: $tool is missing (apt-get install $tool)" >&2; exit 1; }
done

export PATH=/opt/swift/usr/bin:$PATH
# A scratch path of its own, so that the debug builds' trait set is left alone.
scratch="${STASH_SERVE_SCRATCH:-$repo_root/.build-release}"
(cd "$repo_root" && swift build -c release --traits Serve --product stash --scratch-path "$scratch" >&2)
stash="$scratch/release/stash"

work="$(mktemp -d)"
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for conf in origin proxy; do
        [[ -f "$work/$conf/nginx.pid" ]] && nginx -p "$work/$conf" -c nginx.conf -s stop 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
origin_port=$(free_port)
nginx_port=$(free_port)
stash_port=$(free_port)

mkdir -p "$work/origin/www" "$work/origin/logs" "$work/proxy/cache" "$work/proxy/logs" "$work/proxy/temp" "$work/stash"
head -c 1024 /dev/urandom >"$work/origin/www/1k"
head -c 65536 /dev/urandom >"$work/origin/www/64k"
chmod -R a+rwX "$work/origin" "$work/proxy"

cat >"$work/origin/nginx.conf" <<CONF
worker_processes 1;
pid $work/origin/nginx.pid;
error_log $work/origin/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$origin_port;
        root $work/origin/www;
        default_type application/octet-stream;
        add_header Cache-Control "public, max-age=86400";
    }
}
CONF

cat >"$work/proxy/nginx.conf" <<CONF
worker_processes auto;
pid $work/proxy/nginx.pid;
error_log $work/proxy/logs/error.log warn;
events { worker_connections 4096; }
http {
    log_format cache '\$remote_addr - - [\$time_local] "\$request" \$status \$body_bytes_sent \$upstream_cache_status';
    access_log $work/proxy/logs/access.log cache buffer=64k flush=1s;
    proxy_cache_path $work/proxy/cache levels=1:2 keys_zone=stash_bench:16m max_size=1g inactive=1h;
    proxy_temp_path $work/proxy/temp;
    upstream origin { server 127.0.0.1:$origin_port; keepalive 64; }
    server {
        listen 127.0.0.1:$nginx_port;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_cache stash_bench;
            proxy_cache_lock on;
            add_header X-Cache-Status \$upstream_cache_status;
        }
    }
}
CONF

nginx -p "$work/origin" -c nginx.conf
nginx -p "$work/proxy" -c nginx.conf
"$stash" serve --origin "http://127.0.0.1:$origin_port" --listen "127.0.0.1:$stash_port" --dir "$work/stash" \
    --access-log "$work/stash/access.log" >"$work/stash.out" 2>&1 &
pids+=($!)
stash_pid=$!
for _ in $(seq 100); do grep -q "listening on" "$work/stash.out" && break; sleep 0.1; done
grep -q "listening on" "$work/stash.out" || { cat "$work/stash.out" >&2; exit 1; }

# Warm both caches and check that the second request is a hit.
for size in 1k 64k; do
    for port in $nginx_port $stash_port; do
        curl -s -o /dev/null "http://127.0.0.1:$port/$size"
        curl -s -o /dev/null "http://127.0.0.1:$port/$size"
    done
    curl -s -D - -o /dev/null "http://127.0.0.1:$nginx_port/$size" | grep -qi "X-Cache-Status: HIT" \
        || { echo "run-serve.sh: nginx does not cache /$size" >&2; exit 1; }
    curl -s -D - -o /dev/null "http://127.0.0.1:$stash_port/$size" | grep -qi "^Age:" \
        || { echo "run-serve.sh: stash serve does not cache /$size" >&2; exit 1; }
done

results="$work/results.tsv"
: >"$results"
load_before=$(cut -d' ' -f1 /proc/loadavg)
# CPU seconds (user + system) the proxy's processes have used: nginx's master and workers, or stash.
cpu_seconds() {
    local ids
    if [[ $1 == nginx ]]; then
        ids="$(cat "$work/proxy/nginx.pid") $(pgrep -P "$(cat "$work/proxy/nginx.pid")" | tr '\n' ' ')"
    else
        ids=$stash_pid
    fi
    for id in $ids; do cat "/proc/$id/stat" 2>/dev/null; done |
        awk -v tick="$(getconf CLK_TCK)" '{ sum += $14 + $15 } END { printf "%.4f", sum / tick }'
}
to_ms() { # wrk prints 1.23ms, 456.00us or 1.02s
    python3 -c 'import sys,re; v=sys.argv[1]; m=re.match(r"([\d.]+)(us|ms|s)",v); n=float(m.group(1)); print({"us":n/1000,"ms":n,"s":n*1000}[m.group(2)])' "$1"
}
for round in $(seq "$rounds"); do
    for size in 1k 64k; do
        for proxy in nginx stash; do
            port=$nginx_port; [[ $proxy == stash ]] && port=$stash_port
            cpu_before=$(cpu_seconds "$proxy")
            out=$(wrk -t2 -c"$connections" -d"${duration}s" --latency "http://127.0.0.1:$port/$size")
            cpu_after=$(cpu_seconds "$proxy")
            requests=$(awk '/requests in/ {print $1}' <<<"$out")
            cpu_us=$(python3 -c "print(f'{($cpu_after - $cpu_before) * 1e6 / $requests:.2f}')")
            rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
            p50=$(awk '$1=="50%" {print $2}' <<<"$out")
            p99=$(awk '$1=="99%" {print $2}' <<<"$out")
            errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$size" "$proxy" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")" \
                "$cpu_us" >>"$results"
            echo "round $round $size $proxy: $rps req/s p50 $p50 p99 $p99 CPU $cpu_us us/request $errors (load $(cut -d' ' -f1 /proc/loadavg))" >&2
        done
    done
done

load_after=$(cut -d' ' -f1 /proc/loadavg)
table=$(python3 - "$results" "$rounds" "$duration" "$connections" "$(nproc)" "$load_before" "$load_after" <<'PY'
import statistics, sys
path, rounds, duration, connections, cores, load_before, load_after = sys.argv[1:]
rows = [line.split("\t") for line in open(path).read().splitlines()]
def median(size, proxy, column):
    return statistics.median(float(r[column]) for r in rows if r[1] == size and r[2] == proxy)
print(f"wrk, {connections} connections, {duration} s per run, medians of {rounds} interleaved rounds, {cores} cores "
      "shared by wrk, the proxy and the origin; both proxies log every request (64 KiB buffer); "
      f"1-minute load average {load_before} before the first run, {load_after} after the last.\n")
print("| body | nginx proxy_cache req/s | stash serve req/s | stash / nginx | nginx p50 / p99 (ms) | stash p50 / p99 (ms) "
      "| CPU µs per request, nginx / stash |")
print("|---|---|---|---|---|---|---|")
for size, label in (("1k", "1 KiB"), ("64k", "64 KiB")):
    n, s = median(size, "nginx", 3), median(size, "stash", 3)
    print(f"| {label} | {n:,.0f} | {s:,.0f} | {s / n:.2f}x | {median(size, 'nginx', 4):.2f} / {median(size, 'nginx', 5):.2f} "
          f"| {median(size, 'stash', 4):.2f} / {median(size, 'stash', 5):.2f} "
          f"| {median(size, 'nginx', 6):.1f} / {median(size, 'stash', 6):.1f} |")
PY
)
echo "$table"
if [[ $write_readme == 1 ]]; then
    python3 - "$bench_dir/README.md" "$table" <<'PY'
import sys
path, table = sys.argv[1:]
text = open(path).read()
heading = "## stash serve (issues 31, 32)"
section = (heading + "\n\nCached hits through `stash serve` and nginx `proxy_cache` in front of one nginx origin, "
           "measured by `Benchmarks/run-serve.sh --write-readme`.\n\n" + table + "\n")
if heading in text:
    start = text.index(heading)
    rest = text.find("\n## ", start + len(heading))
    text = text[:start] + section + (text[rest + 1:] if rest != -1 else "")
else:
    text = text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
PY
fi
