#!/usr/bin/env bash
# CPU time that `stash serve` spends per miss: two stash binaries (e.g. before and after a change to
# the origin client) in interleaved rounds, each taking one pass over every object of a working set
# (all misses: every request goes to the origin and is stored), in front of one nginx origin.
#
#   Benchmarks/serve-miss-cpu.sh BASE_BIN NEW_BIN [--rounds N] [--objects N] [--connections N]
#
# The objects are those of run-serve.sh (seeded: 60 % 1-8 KiB, 30 % 8-64 KiB, 10 % 64-512 KiB). For
# each run it reports the proxy process's CPU time (utime + stime from /proc/PID/stat, before and after
# the pass) per request, and the pass's wall-clock seconds; then the medians of each binary and their
# ratio. CPU time per request is the figure to quote on a shared machine: wall-clock time moves with
# what else runs. Every server listens on 127.0.0.1 and is stopped when the script exits.
set -euo pipefail

base_bin="${1:?usage: serve-miss-cpu.sh BASE_BIN NEW_BIN [--rounds N] [--objects N] [--connections N]}"
new_bin="${2:?usage: serve-miss-cpu.sh BASE_BIN NEW_BIN [--rounds N] [--objects N] [--connections N]}"
shift 2
rounds=3
objects=4000
connections=32
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --objects) objects="$2"; shift ;;
        --connections) connections="$2"; shift ;;
        *) echo "serve-miss-cpu.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
command -v nginx >/dev/null || { echo "serve-miss-cpu.sh: nginx is needed (apt-get install nginx-light)" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/stash-miss-cpu.XXXXXX")"
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]:-}"; do [[ -n $pid ]] && kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]:-}"; do [[ -n $pid ]] && wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkdir -p "$work/www/o" "$work/logs"
python3 - "$work" "$objects" <<'PY'
import random, sys
work, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
with open(f"{work}/objects.txt", "w") as names:
    for i in range(count):
        r = rng.random()
        size = rng.randint(1024, 8192) if r < 0.6 else rng.randint(8193, 65536) if r < 0.9 else rng.randint(65537, 524288)
        with open(f"{work}/www/o/{i}", "wb") as f:
            f.write(rng.randbytes(size))
        names.write(f"/o/{i}\n")
PY
chmod -R a+rX "$work"
origin_port="$(free_port)"
cat >"$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    server {
        listen 127.0.0.1:$origin_port;
        root $work/www;
        default_type application/octet-stream;
        add_header Cache-Control "public, max-age=86400";
    }
}
CONF
nginx -p "$work" -c "$work/nginx.conf" -e "$work/logs/error.log" -g 'daemon off;' &
pids+=($!)

# One pass over every object over CONNECTIONS keep-alive connections; fails on any status but 200.
pass_client="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/python/serve_pass.py"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
ticks_per_second="$(getconf CLK_TCK)"
results="$work/results.tsv"
: >"$results"
for round in $(seq "$rounds"); do
    for label in base new; do
        bin="$base_bin"
        [[ $label == new ]] && bin="$new_bin"
        port="$(free_port)"
        rm -rf "$work/cache"
        "$bin" serve --origin "http://127.0.0.1:$origin_port" --listen "127.0.0.1:$port" --dir "$work/cache" \
            --memory-limit 64MiB --size-limit 2GiB >"$work/serve-$label.log" 2>&1 &
        pid=$!
        for _ in $(seq 300); do
            curl -s -o /dev/null -m 1 "http://127.0.0.1:$port/o/0-not-there" && break
            sleep 0.1
        done
        before="$(cpu_ticks "$pid")"
        seconds="$(python3 "$pass_client" "$port" "$connections" "$work/objects.txt")"
        after="$(cpu_ticks "$pid")"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        cpu_us=$(( (after - before) * 1000000 / ticks_per_second / objects ))
        printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$cpu_us" "$seconds" >>"$results"
        echo "round $round $label: ${cpu_us} µs CPU per miss, pass ${seconds} s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
done
python3 - "$results" "$objects" <<'PY'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().split("\n") if line]
def med(label, column): return statistics.median(float(r[column]) for r in rows if r[1] == label)
base_cpu, new_cpu = med("base", 2), med("new", 2)
print(f"{sys.argv[2]} misses per pass, medians of {len(rows) // 2} interleaved rounds:")
print(f"  base: {base_cpu:.0f} µs CPU per miss, pass {med('base', 3):.2f} s")
print(f"  new:  {new_cpu:.0f} µs CPU per miss, pass {med('new', 3):.2f} s")
print(f"  new / base CPU per miss: {new_cpu / base_cpu:.2f}")
PY
