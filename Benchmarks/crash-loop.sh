#!/usr/bin/env bash
# The SIGKILL loop of issue 30: kills a process storing bursts of new keys under write-behind
# (StashTestWorker burst) at a random moment, then checks the cache it left behind
# (StashTestWorker burst-check):
#   * no damaged value (every value is self-describing) and a healthy verify();
#   * no flushed store lost (every key up to the last "flushed S" line is present);
#   * no pinned store lost (a pinned store commits before it returns);
#   * how many stores that returned were lost (the unflushed tail of the last batches).
#
# --mode growing (issue 40) never reaches the size limit: one cache for every kill, every value
# a file (StashTestWorker grow: 600 B-6 KB, unique keys, one in four pinned, a flush every 50
# stores), so the fan-out grows to tens of thousands of files. After every kill a fresh process
# reopens it (the orphan reclaim lists the whole fan-out) and reads every key acknowledged by
# any kill so far (StashTestWorker grow-check); a reopen or a writer that dies of anything but
# the SIGKILL fails the kill. Each line reports the files and bytes under data/.
#
#   Benchmarks/crash-loop.sh [--mode bursts|growing] [--kills 300] [--worker PATH] [--dir PARENT]
#
# Needs the test worker: swift build --build-tests (or --product StashTestWorker); a sanitizer's
# build works too (--worker .build-asan/debug/StashTestWorker).
# Prints one line per kill and a summary; exits 1 if any check failed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kills=300
mode=bursts
worker="$repo_root/.build/debug/StashTestWorker"
parent="${TMPDIR:-/tmp}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --kills) kills="$2"; shift ;;
        --mode) mode="$2"; shift ;;
        --worker) worker="$2"; shift ;;
        --dir) parent="$2"; shift ;;
        -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "crash-loop.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
# --mode growing: one cache, every kill's round logged in $work/logs/round-N.log.
grow_loop() {
    local cache="$work/cache" logs="$work/logs" failures=0 most_files=0 most_bytes=0
    local total_lost=0 total_unacknowledged=0 total_acknowledged=0
    mkdir -p "$logs"
    for kill_number in $(seq 1 "$kills"); do
        local log="$logs/round-$kill_number.log"
        "$worker" grow "$cache" "$kill_number" > "$log" 2> "$work/grow.err" &
        local pid=$!
        if (( RANDOM % 8 == 0 )); then
            # One kill in eight lands 0-150 ms after the start: in the open, or the orphan reclaim
            # over the whole fan-out that it starts.
            sleep "$(printf '0.%03d' $(( RANDOM % 151 )))"
        else
            for _ in $(seq 1 2000); do
                grep -q '^stored\|^pinned' "$log" 2>/dev/null && break
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.005
            done
            # 5 to 1500 ms into the stores.
            local millis=$(( RANDOM % 1496 + 5 ))
            sleep "$(( millis / 1000 )).$(printf '%03d' $(( millis % 1000 )))"
        fi
        local problems="" writer_status=0
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || writer_status=$?
        if (( writer_status != 137 )); then
            problems+=" writer-exited-$writer_status($(head -c 300 "$work/grow.err" | tr '\n' ' '))"
        fi
        local result check_status=0
        result="$("$worker" grow-check "$cache" "$logs" 2> "$work/check.err")" || check_status=$?
        if (( check_status != 0 )); then
            problems+=" reopen-failed-$check_status($(head -c 300 "$work/check.err" | tr '\n' ' '))"
        fi
        field() { sed -nE "s/.*(^| )$1=([^ ]*).*/\2/p" <<< "$result"; }
        local acknowledged lost_flushed lost_pinned damaged unacknowledged present_unacknowledged healthy
        acknowledged="$(field acknowledged)"
        lost_flushed="$(field lost-flushed)"
        lost_pinned="$(field lost-pinned)"
        damaged="$(field damaged)"
        unacknowledged="$(field unacknowledged)"
        present_unacknowledged="$(field present-unacknowledged)"
        healthy="$(field healthy)"
        if [[ -n "$result" ]]; then
            if [[ "$lost_flushed" != 0 ]]; then problems+=" flushed-lost=$lost_flushed"; fi
            if [[ "$lost_pinned" != 0 ]]; then problems+=" pinned-lost=$lost_pinned"; fi
            if [[ "$damaged" != 0 ]]; then problems+=" damaged=$damaged"; fi
            if [[ "$healthy" != true ]]; then problems+=" unhealthy"; fi
            total_acknowledged=$acknowledged
            total_unacknowledged=$unacknowledged
            total_lost=$(( unacknowledged - present_unacknowledged ))
        fi
        local files bytes
        files="$(find "$cache/data" -type f 2>/dev/null | wc -l)"
        bytes="$(find "$cache/data" -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')"
        if (( files > most_files )); then most_files=$files; fi
        if (( ${bytes:-0} > most_bytes )); then most_bytes=${bytes:-0}; fi
        local status=ok
        if [[ -n "$problems" ]]; then status="FAIL:$problems"; failures=$(( failures + 1 )); fi
        echo "kill $kill_number: acknowledged $acknowledged, unacknowledged $unacknowledged" \
            "(present $present_unacknowledged), files $files, bytes $bytes ($status)"
    done
    echo "summary: $kills kills, $failures failed; acknowledged stores $total_acknowledged, all read back;" \
        "unacknowledged stores $total_unacknowledged, $total_lost of them lost;" \
        "largest fan-out $most_files files, $most_bytes bytes"
    (( failures == 0 ))
}

[[ -x "$worker" ]] || { echo "crash-loop.sh: build $worker first" >&2; exit 1; }
[[ "$mode" == bursts || "$mode" == growing ]] || { echo "crash-loop.sh: --mode bursts or growing" >&2; exit 2; }

work="$(mktemp -d "$parent/stash-crash-loop-XXXXXX")"
trap 'rm -rf "$work"' EXIT
if [[ "$mode" == growing ]]; then
    grow_loop
    exit $?
fi
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
