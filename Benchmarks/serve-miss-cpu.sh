#!/usr/bin/env bash
# CPU time that a caching proxy spends per miss: two or more builds of `stash serve` (e.g. before and
# after a change to the origin client), or one and nginx `proxy_cache`, or the floors below, in
# interleaved rounds, each taking one pass over every object of a working set (all misses: every
# request goes to the origin and is stored), in front of one nginx origin. Each round starts one
# proxy further along the list, so that none always runs first.
#
#   Benchmarks/serve-miss-cpu.sh BASE NEW [MORE ...] [--rounds N] [--objects N] [--connections N]
#                                [--memory-only] [--fresh-fs]
#
# Each proxy is a `stash` binary, or `nginx`: nginx `proxy_cache` as run-serve.sh configures it
# (`worker_processes auto`, keep-alive upstream, 16 MiB keys zone, 2 GiB on disk), or `nginx-relay`:
# the same nginx without `proxy_cache` (it relays and stores nothing: against `nginx`, its cache's
# share), or `nio-relay`: the floor of a relay on SwiftNIO's HTTP/1.1 codec
# (Benchmarks/floor/nio-relay: one origin connection per client connection on the same event loop,
# nothing looked up or stored; built here in release into .build-release), `nio-relay-store`: that
# floor storing each response in a `DiskCache` configured as `stash serve`'s disk tier (the least a
# proxy on Stash's disk tier does per miss), or `nio-relay-files`: that floor writing each response to
# a temporary file renamed into a fan-out, as nginx's `proxy_cache` stores (the same relay storing
# without an index); `nio-relay-store-on-loop` and `nio-relay-files-on-loop` store on the event loop
# instead of a thread pool, as nginx's workers do. `stash serve` runs with `--memory-limit 64MiB` and a
# 2 GiB disk tier; with `--memory-only`, without the disk tier (the relay and the memory tier alone:
# against a run with it, the disk tier's share of a miss).
#
# The objects are those of run-serve.sh (seeded: 60 % 1-8 KiB, 30 % 8-64 KiB, 10 % 64-512 KiB). For
# each run it reports the proxy's CPU time (utime + stime from /proc/PID/stat of its processes, before
# and after the pass) per request, and the pass's wall-clock seconds; then the medians of each, their
# ratios to BASE's, and the medians of the per-round ratios. CPU time per request is the figure to
# quote on a shared machine: wall-clock time moves with what else runs. Each run starts the proxy on a
# cache directory of its own, all removed at the exit. Every server listens on 127.0.0.1 and is stopped
# when the script exits.
#
# `--fresh-fs` (root only) puts the whole run on a new ext4 file system, a sparse image below
# TMPDIR mounted through a loop device and removed at the exit: nothing was deleted on it before,
# so no pass pays for ext4's search among recently freed inodes, which otherwise moves a pass that
# starts minutes after a large deletion by up to 3× (see Benchmarks/README.md, "To rerun"). The
# loop device adds its own layer, so quote its figures as ratios within the run.
set -euo pipefail

usage="usage: serve-miss-cpu.sh BASE NEW [MORE ...] [--rounds N] [--objects N] [--connections N] [--memory-only] [--fresh-fs]"
proxies=()
while [[ $# -gt 0 && $1 != --* ]]; do proxies+=("$1"); shift; done
[[ ${#proxies[@]} -ge 2 ]] || { echo "$usage" >&2; exit 2; }
for proxy in "${proxies[@]}"; do
    case "$proxy" in
        nio-relay-store | nio-relay-files | nio-relay-store-on-loop | nio-relay-files-on-loop) ;;
        nio-relay-*) echo "serve-miss-cpu.sh: unknown floor $proxy" >&2; echo "$usage" >&2; exit 2 ;;
    esac
done
count=${#proxies[@]}
rounds=3
objects=4000
connections=32
stash_storage=(--memory-limit 64MiB --size-limit 2GiB)
memory_only=0
fresh_fs=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --objects) objects="$2"; shift ;;
        --connections) connections="$2"; shift ;;
        --memory-only) memory_only=1 ;;
        --fresh-fs) fresh_fs=1 ;;
        *) echo "serve-miss-cpu.sh: unknown argument $1" >&2; echo "$usage" >&2; exit 2 ;;
    esac
    shift
done
command -v nginx >/dev/null || { echo "serve-miss-cpu.sh: nginx is needed (apt-get install nginx-light)" >&2; exit 2; }
relay_floor=""
if [[ " ${proxies[*]}" == *" nio-relay"* ]]; then
    repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    (cd "$repo_root" && PATH=/opt/swift/usr/bin:$PATH swift build -c release --traits Serve \
        --product StashRelayFloor --scratch-path "$repo_root/.build-release" >&2)
    relay_floor="$repo_root/.build-release/release/StashRelayFloor"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/stash-miss-cpu.XXXXXX")"
chmod 755 "$work"
image=""
if [[ $fresh_fs == 1 ]]; then
    [[ $(id -u) == 0 ]] || { echo "serve-miss-cpu.sh: --fresh-fs mounts a file system: run it as root" >&2; exit 2; }
    # Room for the objects, then every pass's cache (each about the objects' size) and spare.
    image="$work.img"
    truncate -s "$(( (objects * 48 * 1024) * (count * rounds + 2) + (4 << 30) ))" "$image"
    mkfs.ext4 -q -F "$image"
    mount -o loop "$image" "$work"
    chmod 755 "$work"
fi
pids=()
cleanup() {
    for pid in "${pids[@]:-}"; do [[ -n $pid ]] && kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]:-}"; do [[ -n $pid ]] && wait "$pid" 2>/dev/null || true; done
    if [[ -n $image ]]; then
        umount "$work" || true
        rm -f "$image"
    fi
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

# The CPU ticks (utime + stime) of a process and its children.
cpu_ticks() {
    local total=0 pid
    for pid in "$1" $(pgrep -P "$1" || true); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
ticks_per_second="$(getconf CLK_TCK)"

# Starts nginx proxy_cache on port $2 with the cache directory $1 (without proxy_cache when $3 is
# "relay"); sets pid to its master's process id.
start_nginx_proxy() {
    local dir=$1 port=$2 cache="proxy_cache stash_bench; proxy_cache_lock on;"
    [[ ${3:-} == relay ]] && cache=""
    mkdir -p "$dir/cache" "$dir/temp" "$dir/logs"
    chmod -R a+rwX "$dir"
    cat >"$dir/nginx.conf" <<CONF
worker_processes auto;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    proxy_cache_path $dir/cache levels=1:2 keys_zone=stash_bench:16m max_size=2g inactive=1h;
    proxy_temp_path $dir/temp;
    upstream origin { server 127.0.0.1:$origin_port; keepalive 64; }
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            $cache
        }
    }
}
CONF
    nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" -g 'daemon off;' &
    pid=$!
}

results="$work/results.tsv"
: >"$results"
for round in $(seq "$rounds"); do
    # Each round starts one proxy further along, so that none always runs first (the first pass of
    # a round comes out a few per cent slower).
    for step in $(seq 0 $((count - 1))); do
        index=$(( (step + round - 1) % count ))
        bin="${proxies[$index]}"
        label="$((index + 1))"
        port="$(free_port)"
        # A new cache directory for each run, all removed at the exit: ext4 passes over inodes freed
        # in the last 60-300 s when it allocates one, so a pass that follows the removal of the
        # previous pass's files paid for that search in every file it created (a fifth of the
        # proxy's CPU in a profile), and the rounds measured the file system more than the proxy.
        dir="$work/cache-$round-$label"
        if [[ $bin == nginx || $bin == nginx-relay ]]; then
            start_nginx_proxy "$dir" "$port" "${bin#nginx-}"
        elif [[ $bin == nio-relay ]]; then
            "$relay_floor" "$port" "$origin_port" >"$work/relay-$label.log" 2>&1 &
            pid=$!
        elif [[ $bin == nio-relay-* ]]; then
            mode="${bin#nio-relay-}"
            floor_options=(--"${mode%-on-loop}" "$dir")
            [[ $mode == *-on-loop ]] && floor_options+=(--on-loop)
            "$relay_floor" "$port" "$origin_port" "${floor_options[@]}" >"$work/relay-$label.log" 2>&1 &
            pid=$!
        else
            storage=(--dir "$dir" "${stash_storage[@]}")
            [[ $memory_only == 1 ]] && storage=(--memory-limit 64MiB)
            "$bin" serve --origin "http://127.0.0.1:$origin_port" --listen "127.0.0.1:$port" "${storage[@]}" \
                >"$work/serve-$label.log" 2>&1 &
            pid=$!
        fi
        pids+=("$pid")
        for _ in $(seq 300); do
            curl -s -o /dev/null -m 1 "http://127.0.0.1:$port/o/0-not-there" && break
            sleep 0.1
        done
        # The passes before wrote about 1 GiB each: written back first, so that this pass does not
        # pay for their writeback (the kernel throttles a writer once dirty pages pass a share of RAM).
        sync
        before="$(cpu_ticks "$pid")"
        seconds="$(python3 "$pass_client" "$port" "$connections" "$work/objects.txt")"
        after="$(cpu_ticks "$pid")"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        cpu_us=$(( (after - before) * 1000000 / ticks_per_second / objects ))
        printf '%s\t%s\t%s\t%s\n' "$round" "$label" "$cpu_us" "$seconds" >>"$results"
        echo "round $round #$label ($(basename "$bin")): ${cpu_us} µs CPU per miss, pass ${seconds} s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    done
done
python3 - "$results" "$objects" "${proxies[@]}" <<'PY'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().split("\n") if line]
names = [name.rsplit("/", 1)[-1] for name in sys.argv[3:]]
def values(label, column): return {r[0]: float(r[column]) for r in rows if r[1] == label}
print(f"{sys.argv[2]} misses per pass, medians of {len(rows) // len(names)} rounds (each proxy first in turn);")
print("ratios against #1: of the medians, and the median of the per-round ratios")
base_cpu, base_time = values("1", 2), values("1", 3)
for index, name in enumerate(names):
    cpu, time = values(str(index + 1), 2), values(str(index + 1), 3)
    line = f"  #{index + 1} {name}: {statistics.median(cpu.values()):.0f} µs CPU per miss, pass {statistics.median(time.values()):.2f} s"
    if index > 0:
        per_round_cpu = statistics.median(cpu[r] / base_cpu[r] for r in cpu)
        per_round_time = statistics.median(time[r] / base_time[r] for r in time)
        line += (f"; CPU {statistics.median(cpu.values()) / statistics.median(base_cpu.values()):.2f}×"
                 f" (per round {per_round_cpu:.2f}×), time {statistics.median(time.values()) / statistics.median(base_time.values()):.2f}×"
                 f" (per round {per_round_time:.2f}×)")
    print(line)
PY
