#!/usr/bin/env bash
# `stash serve` against nginx proxy_cache, Varnish and Apache Traffic Server, all in front of one nginx
# origin, with nginx serving the files directly as the ceiling. Two workloads, in interleaved rounds:
#
#  * working set: OBJECTS objects with seeded sizes (60 % 1-8 KiB, 30 % 8-64 KiB, 10 % 64-512 KiB),
#    requested with Zipf(0.9) from a seeded table by a wrk Lua script, after one warm pass over every
#    object (timed: the first pass, all misses); each proxy gets the same memory budget;
#  * hot objects: one cached 1 KiB and one 64 KiB body.
#
# Prints a markdown table of the medians: requests/s, p50/p99, the server's CPU time (user + system
# from /proc/PID/stat, its processes summed) per 100,000 requests, origin requests during the timed
# runs, peak RSS and peak anonymous RSS (RSS less file pages) of each proxy's processes.
#
#   Benchmarks/run-serve.sh [--rounds N] [--duration S] [--connections N] [--objects N] [--memory MIB]
#                           [--proxies "nginx varnish ats stash ceiling"] [--baseline BINARY] [--no-hot]
#                           [--object-size BYTES] [--write-readme] [--timeline DIR]
#
#   --rounds N        interleaved rounds (default 3)
#   --duration S      seconds per wrk run (default 10)
#   --connections N   wrk connections (default 64)
#   --objects N       objects in the working set (default 20000)
#   --object-size B   every object B bytes instead of the seeded mix (e.g. --objects 1000000
#                     --object-size 1024: a million URLs, small enough that the disk tiers keep
#                     them all, to see what grows with the number of entries)
#   --memory MIB      every proxy's memory budget (default 64)
#   --proxies LIST    which servers to measure (default: all five)
#   --baseline BINARY also measure this other `stash` build as "baseline", interleaved with the rest
#                     (a before/after comparison in one run)
#   --no-hot          skip the hot-object workloads
#   --write-readme    replace the "## stash serve" section of Benchmarks/README.md
#   --timeline DIR    also write every memory sample (DIR/memory-PROXY.tsv: seconds, RSS and
#                     anonymous RSS in KiB) and when each phase began (DIR/phases.tsv), to see
#                     when a peak came
#
# Installs what is missing from Debian (apt-get install -y nginx varnish trafficserver wrk). Builds
# `stash` in release with the Serve trait. Every server listens on 127.0.0.1 only, runs from a private
# directory, and is stopped when the script exits.
set -euo pipefail

bench_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(dirname "$bench_dir")"
rounds=3
duration=10
connections=64
objects=20000
object_size=0
memory_mib=64
proxies="nginx varnish ats stash ceiling"
hot=1
write_readme=0
baseline=""
timeline=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --rounds) rounds="$2"; shift ;;
        --duration) duration="$2"; shift ;;
        --connections) connections="$2"; shift ;;
        --objects) objects="$2"; shift ;;
        --object-size) object_size="$2"; shift ;;
        --memory) memory_mib="$2"; shift ;;
        --proxies) proxies="$2"; shift ;;
        --baseline) baseline="$2"; shift ;;
        --no-hot) hot=0 ;;
        --write-readme) write_readme=1 ;;
        --timeline) timeline="$2"; shift ;;
        -h | --help) sed -n '2,37p' "$0"; exit 0 ;;
        *) echo "run-serve.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
# Counts and sizes are whole numbers: a typo fails here, with the option's name, not later in Python.
for option in rounds:$rounds duration:$duration connections:$connections objects:$objects \
    object-size:$object_size memory:$memory_mib; do
    value="${option#*:}"
    [[ $value =~ ^[0-9]+$ ]] || { echo "run-serve.sh: --${option%%:*} takes a whole number, not '$value'" >&2; exit 2; }
done
if [[ -n $baseline ]]; then
    [[ -x $baseline ]] || { echo "run-serve.sh: --baseline $baseline is not an executable" >&2; exit 2; }
    proxies="$proxies baseline"
fi
missing=()
command -v nginx >/dev/null || missing+=(nginx)
command -v wrk >/dev/null || missing+=(wrk)
[[ $proxies == *varnish* ]] && ! command -v varnishd >/dev/null && missing+=(varnish)
[[ $proxies == *ats* ]] && ! command -v traffic_server >/dev/null && missing+=(trafficserver)
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "run-serve.sh: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >&2
fi

export PATH=/opt/swift/usr/bin:$PATH
# A scratch path of its own, so that the debug builds' trait set is left alone.
scratch="${STASH_SERVE_SCRATCH:-$repo_root/.build-release}"
if [[ -z ${STASH_SERVE_BINARY:-} ]]; then
    (cd "$repo_root" && swift build -c release --traits Serve --product stash --scratch-path "$scratch" >&2)
fi
stash="${STASH_SERVE_BINARY:-$scratch/release/stash}"

work="$(mktemp -d "${STASH_SERVE_WORK:-/tmp}/stash-serve-bench.XXXXXX")"
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for conf in origin proxy ceiling; do
        [[ -f "$work/$conf/nginx.pid" ]] && nginx -p "$work/$conf" -c nginx.conf -s stop 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
declare -A port
for name in origin nginx varnish ats stash baseline ceiling; do port[$name]=$(free_port); done

# --- The objects, the request table and the wrk scripts (seeded) ---------------------------------
mkdir -p "$work/origin/www/o" "$work/origin/logs"
python3 - "$work" "$objects" "$object_size" <<'PY'
import os, random, sys
work, count, fixed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(42)
total = 0
with open(f"{work}/objects.txt", "w") as names:
    for i in range(count):
        r = rng.random()
        size = rng.randint(1024, 8192) if r < 0.6 else rng.randint(8193, 65536) if r < 0.9 else rng.randint(65537, 524288)
        if fixed > 0: size = fixed
        with open(f"{work}/origin/www/o/{i}", "wb") as f:
            f.write(rng.randbytes(size))
        names.write(f"/o/{i}\n")
        total += size
# Zipf(0.9) over the objects, ranks shuffled by the seed: 400,000 requests.
ranks = list(range(count))
rng.shuffle(ranks)
weights = [1 / (k + 1) ** 0.9 for k in range(count)]
table = rng.choices(ranks, weights=weights, k=400_000)
with open(f"{work}/zipf.txt", "w") as f:
    f.write("".join(f"/o/{i}\n" for i in table))
print(f"{count} objects, {total / 2**20:.0f} MiB", file=sys.stderr)
PY
head -c 1024 /dev/urandom >"$work/origin/www/1k"
head -c 65536 /dev/urandom >"$work/origin/www/64k"
chmod -R a+rX "$work"

# Each wrk thread walks the table from its own offset.
cat >"$work/zipf.lua" <<LUA
local paths = {}
for line in io.lines("$work/zipf.txt") do paths[#paths + 1] = line end
local counter = 1
local threads = 0
function setup(thread) thread:set("id", threads); threads = threads + 1 end
function init(args) counter = 1 + (tonumber(wrk.thread:get("id")) or 0) * 100003 % #paths end
function request()
    local path = paths[counter]
    counter = counter % #paths + 1
    return wrk.format("GET", path)
end
LUA
# The warm pass: every object once, over CONNECTIONS keep-alive connections (wrk cannot stop after a
# count), by python/serve_pass.py: prints the seconds it took and fails on any status but 200.
pass_client="$bench_dir/python/serve_pass.py"

# --- The servers ---------------------------------------------------------------------------------
cat >"$work/origin/nginx.conf" <<CONF
worker_processes 1;
pid $work/origin/nginx.pid;
error_log $work/origin/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    server {
        listen 127.0.0.1:${port[origin]};
        root $work/origin/www;
        default_type application/octet-stream;
        add_header Cache-Control "public, max-age=86400";
        location = /status { stub_status; add_header Cache-Control "no-store"; }
    }
}
CONF
nginx -p "$work/origin" -c nginx.conf

if [[ $proxies == *ceiling* ]]; then
    mkdir -p "$work/ceiling/logs"
    cat >"$work/ceiling/nginx.conf" <<CONF
worker_processes auto;
pid $work/ceiling/nginx.pid;
error_log $work/ceiling/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    server {
        listen 127.0.0.1:${port[ceiling]};
        root $work/origin/www;
        default_type application/octet-stream;
        add_header Cache-Control "public, max-age=86400";
    }
}
CONF
    nginx -p "$work/ceiling" -c nginx.conf
fi

if [[ $proxies == *nginx* ]]; then
    mkdir -p "$work/proxy/cache" "$work/proxy/logs" "$work/proxy/temp"
    chmod -R a+rwX "$work/proxy"
    # keys_zone holds the keys only (8,000 per MiB); bodies live in files, read through the page cache.
    # 16 MiB, or room for every object's key with a fifth to spare: when the zone is full of keys
    # that are not yet `inactive`, nginx answers a miss with 500 (about 130,000 keys in 16 MiB).
    keys_mib=$(( objects * 6 / 5 / 8000 + 1 ))
    (( keys_mib < 16 )) && keys_mib=16
    cat >"$work/proxy/nginx.conf" <<CONF
worker_processes auto;
pid $work/proxy/nginx.pid;
error_log $work/proxy/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    proxy_cache_path $work/proxy/cache levels=1:2 keys_zone=stash_bench:${keys_mib}m max_size=2g inactive=1h;
    proxy_temp_path $work/proxy/temp;
    upstream origin { server 127.0.0.1:${port[origin]}; keepalive 64; }
    server {
        listen 127.0.0.1:${port[nginx]};
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
    nginx -p "$work/proxy" -c nginx.conf
fi

if [[ $proxies == *varnish* ]]; then
    mkdir -p "$work/varnish"
    cat >"$work/varnish/default.vcl" <<VCL
vcl 4.1;
backend origin { .host = "127.0.0.1"; .port = "${port[origin]}"; }
VCL
    varnishd -F -j none -n "$work/varnish" -a "127.0.0.1:${port[varnish]}" -f "$work/varnish/default.vcl" \
        -s "malloc,${memory_mib}m" >"$work/varnish.out" 2>&1 &
    pids+=($!)
fi

if [[ $proxies == *ats* ]]; then
    ats="$work/ats"
    mkdir -p "$ats/etc" "$ats/var" "$ats/run" "$ats/log" "$ats/cache"
    cp -r /etc/trafficserver/. "$ats/etc/"
    cat >"$ats/runroot.yaml" <<YAML
prefix: $ats
exec_prefix: /usr
bindir: /usr/bin
sbindir: /usr/sbin
sysconfdir: $ats/etc
datadir: $ats/var
includedir: /usr/include
libdir: /usr/lib/trafficserver
libexecdir: /usr/lib/trafficserver/modules
localstatedir: $ats/var
runtimedir: $ats/run
logdir: $ats/log
cachedir: $ats/cache
YAML
    cat >"$ats/etc/records.config" <<CONF
CONFIG proxy.config.admin.user_id STRING #-1
CONFIG proxy.config.http.server_ports STRING ${port[ats]}:ipv4:ip-in=127.0.0.1
CONFIG proxy.config.http.cache.http INT 1
CONFIG proxy.config.cache.ram_cache.size INT $((memory_mib * 1048576))
CONFIG proxy.config.cache.ram_cache_cutoff INT 4194304
CONFIG proxy.config.reverse_proxy.enabled INT 1
CONFIG proxy.config.url_remap.remap_required INT 1
CONFIG proxy.config.http.insert_response_via_str INT 0
CONFIG proxy.config.log.logging_enabled INT 0
CONFIG proxy.config.diags.debug.enabled INT 0
CONFIG proxy.config.http.wait_for_cache INT 1
CONFIG proxy.config.http.cache.max_open_read_retries INT 5
CONFIG proxy.config.http.cache.open_read_retry_time INT 10
CONFIG proxy.config.http.server_session_sharing.match STRING ip
CONFIG proxy.config.http.keep_alive_no_activity_timeout_out INT 120
CONFIG proxy.config.body_factory.template_sets_dir STRING /etc/trafficserver/body_factory
CONFIG proxy.config.process_manager.enable_mgmt_port INT 0
CONF
    echo "map / http://127.0.0.1:${port[origin]}/" >"$ats/etc/remap.config"
    echo "$ats/cache 2G" >"$ats/etc/storage.config"
    : >"$ats/etc/volume.config"
    : >"$ats/etc/cache.config"
    TS_RUNROOT="$ats/runroot.yaml" traffic_server --run-root="$ats/runroot.yaml" >"$work/ats.out" 2>&1 &
    pids+=($!)
fi

start_stash() { # name binary
    mkdir -p "$work/$1"
    "$2" serve --origin "http://127.0.0.1:${port[origin]}" --listen "127.0.0.1:${port[$1]}" \
        --dir "$work/$1" --memory-limit "${memory_mib}MiB" --size-limit 2GiB >"$work/$1.out" 2>&1 &
    pids+=($!)
}
[[ $proxies == *stash* ]] && start_stash stash "$stash"
[[ $proxies == *baseline* ]] && start_stash baseline "$baseline"

# Waits until a server answers, or fails with its log.
await_server() {
    local name=$1 log=$2
    for _ in $(seq 200); do
        curl -s -o /dev/null -m 1 "http://127.0.0.1:${port[$name]}/1k" && return 0
        sleep 0.1
    done
    echo "run-serve.sh: $name does not answer" >&2
    cat "$log" >&2 || true
    exit 1
}
for proxy in $proxies; do
    case $proxy in
        nginx) await_server nginx "$work/proxy/logs/error.log" ;;
        varnish) await_server varnish "$work/varnish.out" ;;
        ats) await_server ats "$work/ats.out" ;;
        stash | baseline) await_server "$proxy" "$work/$proxy.out" ;;
        ceiling) await_server ceiling "$work/ceiling/logs/error.log" ;;
    esac
done

# The process ids of a server: its main process and their children.
server_pids() {
    local main
    case $1 in
        nginx) main=$(cat "$work/proxy/nginx.pid") ;;
        ceiling) main=$(cat "$work/ceiling/nginx.pid") ;;
        varnish) main=$(pgrep -f -- "-n $work/varnish" | head -1) ;;
        ats) main=$(pgrep -f -- "--run-root=$work/ats" | head -1) ;;
        stash | baseline) main=$(pgrep -f -- "--dir $work/$1 " | head -1) ;;
    esac
    echo "$main $(pgrep -P "$main" | tr '\n' ' ') $(for c in $(pgrep -P "$main"); do pgrep -P "$c"; done | tr '\n' ' ')"
}
# Samples the servers' summed RSS and anonymous RSS every 100 ms into $work/memory-NAME until stopped.
sample_memory() {
    local name=$1
    python3 - "$work/memory-$name" "${timeline:+$timeline/memory-$name.tsv}" $(server_pids "$name") <<'PY' &
import os, sys, time
out, samples, pids = sys.argv[1], sys.argv[2], sys.argv[3:]
peak_rss = peak_anon = 0
start = time.monotonic()
log = open(samples, "w") if samples else None
def read():
    rss = anon = 0
    for pid in pids:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"): rss += int(line.split()[1])
                elif line.startswith("RssAnon:"): anon += int(line.split()[1])
        except OSError:
            pass
    return rss, anon
while True:
    rss, anon = read()
    peak_rss, peak_anon = max(peak_rss, rss), max(peak_anon, anon)
    with open(out + ".new", "w") as f: f.write(f"{peak_rss} {peak_anon}\n")
    if log: log.write(f"{time.monotonic() - start:.1f}\t{rss}\t{anon}\n"); log.flush()
    os.replace(out + ".new", out)  # whole, never a half-written file for the reader of the table
    time.sleep(0.1)
PY
    pids+=($!)
}
# The CPU time (user + system, seconds) that a server's processes have used so far.
cpu_seconds() {
    python3 - $(server_pids "$1") <<'PY'
import os, sys
ticks = os.sysconf("SC_CLK_TCK")
total = 0
for pid in sys.argv[1:]:
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        pass
print(total / ticks)
PY
}
origin_requests() { curl -s "http://127.0.0.1:${port[origin]}/status" | awk 'NR==3 {print $3}'; }
to_ms() { # wrk prints 1.23ms, 456.00us or 1.02s
    python3 -c 'import sys,re; v=sys.argv[1]; m=re.match(r"([\d.]+)(us|ms|s)",v); n=float(m.group(1)); print({"us":n/1000,"ms":n,"s":n*1000}[m.group(2)])' "$1"
}

results="$work/results.tsv"
: >"$results"
if [[ -n $timeline ]]; then
    mkdir -p "$timeline"
    : >"$timeline/phases.tsv"
fi
phase_start=$(date +%s.%N)
phase() { # label: when a phase began, in seconds from the memory sampling's start
    [[ -n $timeline ]] || return 0
    awk -v now="$(date +%s.%N)" -v start="$phase_start" -v label="$1" \
        'BEGIN { printf "%.1f\t%s\n", now - start, label }' >>"$timeline/phases.tsv"
}
load_before=$(cut -d' ' -f1 /proc/loadavg)
for proxy in $proxies; do sample_memory "$proxy"; done

# The warm pass, timed: every object once (misses through the proxies).
for proxy in $proxies; do
    [[ $proxy == ceiling ]] && continue
    phase "first pass $proxy"
    seconds=$(python3 "$pass_client" "${port[$proxy]}" "$connections" "$work/objects.txt")
    printf 'warm\t0\t%s\t%s\n' "$proxy" "$seconds" >>"$results"
    echo "first pass $proxy: $seconds s (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

run_wrk() { # round workload proxy url [script]
    local round=$1 workload=$2 proxy=$3 url=$4 script=${5:-}
    local before after out cpu_before cpu_after
    phase "round $round $workload $proxy"
    before=$(origin_requests)
    cpu_before=$(cpu_seconds "$proxy")
    out=$(wrk -t2 -c"$connections" -d"${duration}s" --latency ${script:+-s "$script"} "$url")
    cpu_after=$(cpu_seconds "$proxy")
    after=$(origin_requests)
    local rps p50 p99 errors requests cpu
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    cpu=$(python3 -c "import sys; print(f'{(float(sys.argv[2]) - float(sys.argv[1])) * 100000 / max(1, int(sys.argv[3])):.2f}')" \
        "$cpu_before" "$cpu_after" "$requests")
    rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$workload" "$round" "$proxy" "$rps" "$(to_ms "$p50")" "$(to_ms "$p99")" \
        "$((after - before - 1))" "$cpu" >>"$results"
    echo "round $round $workload $proxy: $rps req/s p50 $p50 p99 $p99, origin $((after - before - 1)), CPU $cpu s per 100k $errors (load $(cut -d' ' -f1 /proc/loadavg))" >&2
}
for round in $(seq "$rounds"); do
    for proxy in $proxies; do
        run_wrk "$round" zipf "$proxy" "http://127.0.0.1:${port[$proxy]}" "$work/zipf.lua"
    done
    [[ $hot == 1 ]] || continue
    for size in 1k 64k; do
        for proxy in $proxies; do run_wrk "$round" "$size" "$proxy" "http://127.0.0.1:${port[$proxy]}/$size"; done
    done
done
phase "end"
load_after=$(cut -d' ' -f1 /proc/loadavg)
for proxy in $proxies; do printf 'memory\t0\t%s\t%s\n' "$proxy" "$(cat "$work/memory-$proxy")" >>"$results"; done
cp "$results" "${STASH_SERVE_RESULTS:-/tmp/run-serve-results.tsv}"

table=$(python3 - "$results" "$rounds" "$duration" "$connections" "$(nproc)" "$load_before" "$load_after" \
    "$objects" "$memory_mib" "$proxies" "$object_size" <<'PY'
import statistics, sys
path, rounds, duration, connections, cores, load_before, load_after, objects, memory, proxies, size = sys.argv[1:]
sizes = f"{size} bytes each" if int(size) > 0 else "60 % 1-8 KiB, 30 % 8-64 KiB, 10 % 64-512 KiB"
proxies = proxies.split()
rows = [line.split("\t") for line in open(path).read().splitlines()]
names = {"nginx": "nginx proxy_cache", "varnish": f"Varnish (malloc {memory}m)", "ats": f"Traffic Server ({memory} MiB RAM cache)",
         "stash": f"`stash serve` (--memory-limit {memory}MiB)", "baseline": "`stash serve`, baseline build",
         "ceiling": "nginx serving the files"}
def median(workload, proxy, column):
    values = [float(r[column]) for r in rows if r[0] == workload and r[2] == proxy]
    return statistics.median(values) if values else float("nan")
print(f"wrk, {connections} connections, {duration} s per run, medians of {rounds} interleaved rounds; {cores} cores shared by "
      f"wrk, the proxies and the origin; 1-minute load average {load_before} before the first run, {load_after} after the last. "
      f"Working set: {objects} objects ({sizes}), Zipf 0.9, after one warm pass.\n")
print("| | " + " | ".join(names[p] for p in proxies) + " |")
print("|---|" + "---:|" * len(proxies))
def row(label, cells): print(f"| {label} | " + " | ".join(cells) + " |")
row("Zipf 0.9: req/s", [f"{median('zipf', p, 3):,.0f}" for p in proxies])
row("Zipf 0.9: p50 / p99 ms", [f"{median('zipf', p, 4):.1f} / {median('zipf', p, 5):.1f}" for p in proxies])
row("Zipf 0.9: server CPU s per 100k requests", [f"{median('zipf', p, 7):.2f}" for p in proxies])
row("Zipf 0.9: origin requests per timed run", [f"{median('zipf', p, 6):,.0f}" if p != "ceiling" else "-" for p in proxies])
for size, label in (("1k", "1 KiB"), ("64k", "64 KiB")):
    if any(r[0] == size for r in rows):
        row(f"one hot {label} object: req/s", [f"{median(size, p, 3):,.0f}" for p in proxies])
        row(f"one hot {label} object: server CPU s per 100k requests", [f"{median(size, p, 7):.2f}" for p in proxies])
        row(f"one hot {label} object: p50 / p99 ms", [f"{median(size, p, 4):.2f} / {median(size, p, 5):.2f}" for p in proxies])
row("first pass over the objects (all misses), s", [f"{median('warm', p, 3):.1f}" if p != "ceiling" else "-" for p in proxies])
mem = {r[2]: r[3].split() for r in rows if r[0] == "memory"}
row("peak RSS, MiB", [f"{int(mem[p][0]) / 1024:.0f}" for p in proxies])
row("peak anonymous RSS, MiB", [f"{int(mem[p][1]) / 1024:.0f}" for p in proxies])
PY
)
echo "$table"
if [[ $write_readme == 1 ]]; then
    # Replaces only the generated block of the "## stash serve" section; the method and the analysis
    # around it are written by hand.
    stamp="\`stash\` built from \`$(git -C "$repo_root" rev-parse --short HEAD)$(git -C "$repo_root" diff --quiet HEAD -- Sources || echo ' (modified)')\`, $(date -u '+%Y-%m-%d %H:%M') UTC"
    [[ -n ${STASH_SERVE_BINARY:-} ]] && stamp="\`stash\` from \`STASH_SERVE_BINARY\` (the tree is at $(git -C "$repo_root" rev-parse --short HEAD)), $(date -u '+%Y-%m-%d %H:%M') UTC"
    python3 - "$bench_dir/README.md" "$table" "$stamp" <<'PY'
import sys
path, table, stamp = sys.argv[1:]
text = open(path).read()
begin, end = "<!-- run-serve.sh --write-readme: begin -->", "<!-- run-serve.sh --write-readme: end -->"
block = f"{begin}\n{stamp}. {table}\n{end}"
if begin in text and end in text:
    text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
else:
    text = text.rstrip("\n") + "\n\n## stash serve\n\n" + block + "\n"
open(path, "w").write(text)
PY
fi
