#!/usr/bin/env bash
# The SIGKILL loop of issue 30: kills a process storing bursts of new keys under write-behind
# (StashTestWorker burst) at a random moment, then checks the cache it left behind
# (StashTestWorker burst-check):
#   * no damaged value (every value is self-describing) and a healthy verify();
#   * no flushed store lost (every key up to the last "flushed S" line is present);
#   * no pinned store lost (a pinned store commits before it returns);
#   * how many stores that returned were lost (the unflushed tail of the last batches).
#
#   Benchmarks/crash-loop.sh [--kills 300] [--worker PATH] [--dir PARENT]
#
# Needs the test worker: swift build --build-tests (or --product StashTestWorker).
# Prints one line per kill and a summary; exits 1 if any check failed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kills=300
worker="$repo_root/.build/debug/StashTestWorker"
parent="${TMPDIR:-/tmp}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --kills) kills="$2"; shift ;;
        --worker) worker="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "crash-loop.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ -x "$worker" ]] || { echo "crash-loop.sh: build $worker first" >&2; exit 1; }

work="$(mktemp -d "$parent/stash-crash-loop-XXXXXX")"
trap 'rm -rf "$work"' EXIT
failures=0
most_lost=0
total_lost=0
total_stored=0
for kill_number in $(seq 1 "$kills"); do
    # A fresh cache every 25 kills keeps each check short; within a run of 25, every kill
    # lands on the cache the earlier ones left behind.
    cache="$work/cache-$(( (kill_number - 1) / 25 ))"
    log="$work/burst.log"
    "$worker" burst "$cache" "$kill_number" > "$log" &
    pid=$!
    for _ in $(seq 1 1000); do
        grep -q '^stored' "$log" 2>/dev/null && break
        sleep 0.005
    done
    # 5 to 200 ms into the burst.
    sleep "$(printf '0.%03d' $(( RANDOM % 196 + 5 )))"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    last_stored="$(grep -E '^(stored|pinned) ' "$log" | tail -1 | cut -d' ' -f2 || true)"
    last_flushed="$(grep '^flushed ' "$log" | tail -1 | cut -d' ' -f2 || true)"
    last_stored="${last_stored:-0}"
    last_flushed="${last_flushed:-0}"
    result="$("$worker" burst-check "$cache" "$kill_number" "$last_stored")"
    missing="${result##*missing=}"
    broken="$(sed -E 's/.*broken=([0-9]+).*/\1/' <<< "$result")"
    healthy="$(sed -E 's/.*healthy=([a-z]+).*/\1/' <<< "$result")"
    lost=0
    problems=""
    if [[ -n "$missing" ]]; then
        for step in ${missing//,/ }; do
            lost=$(( lost + 1 ))
            if (( step <= last_flushed )); then problems+=" flushed-$step-lost"; fi
            if grep -qx "pinned $step" "$log"; then problems+=" pinned-$step-lost"; fi
        done
    fi
    if [[ "$broken" != 0 ]]; then problems+=" broken=$broken"; fi
    if [[ "$healthy" != true ]]; then problems+=" unhealthy"; fi
    total_lost=$(( total_lost + lost ))
    total_stored=$(( total_stored + last_stored ))
    if (( lost > most_lost )); then most_lost=$lost; fi
    status=ok
    if [[ -n "$problems" ]]; then status="FAIL:$problems"; failures=$(( failures + 1 )); fi
    echo "kill $kill_number: stored $last_stored, flushed $last_flushed, lost $lost ($status)"
done
echo "summary: $kills kills, $failures failed; stores returned $total_stored, lost $total_lost;" \
    "most lost in one kill: $most_lost"
(( failures == 0 ))
