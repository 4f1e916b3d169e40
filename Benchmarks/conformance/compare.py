#!/usr/bin/env python3
"""Lists the tests that another reverse proxy passes and a stash run does not.

    compare.py --meta tests-meta.json --results-dir SUITE/results STASH.json

The other proxies' results are the ones the suite publishes in its results/
directory (Traffic Server, Apache httpd, Squid, Varnish and nginx); "passes"
is ✅ or a check answered Y, counted as summarize.py counts (dependencies too).
Prints how many tests any of them passes, how many of those the stash run
passes, and every required or optimal test (then every check) some proxy
passes that the stash run does not, with the proxies that pass it. Exit
status 1 when a required or optimal test is in that list.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import Summary  # noqa: E402

OTHERS = ["trafficserver", "apache", "squid", "varnish", "nginx"]


def passing(summary):
    return {test_id for test_id, verdict in summary.verdicts.items() if verdict in ("pass", "yes")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meta", required=True)
    parser.add_argument("--results-dir", required=True)
    parser.add_argument("stash")
    args = parser.parse_args()
    with open(args.meta) as handle:
        meta = json.load(handle)
    passed_by = {}
    for name in OTHERS:
        path = os.path.join(args.results_dir, name + ".json")
        if not os.path.exists(path):
            continue
        with open(path) as handle:
            summary = Summary(meta, json.load(handle))
        for test_id in passing(summary):
            passed_by.setdefault(test_id, []).append(name)
    with open(args.stash) as handle:
        stash = passing(Summary(meta, json.load(handle)))
    kinds = {t["id"]: t.get("kind", "required") for t in meta}
    missing = sorted(set(passed_by) - stash)
    tests = [t for t in missing if kinds.get(t) != "check"]
    checks = [t for t in missing if kinds.get(t) == "check"]
    print(f"passed by another proxy: {len(passed_by)}; of those, passed by stash: {len(passed_by) - len(missing)}")
    print(f"required or optimal tests another proxy passes and stash does not: {len(tests)}")
    for test_id in tests:
        print(f"  {test_id}: {', '.join(passed_by[test_id])}")
    print(f"checks (informational) another proxy answers Y and stash N: {len(checks)}")
    for test_id in checks:
        print(f"  {test_id}: {', '.join(passed_by[test_id])}")
    return 1 if tests else 0


if __name__ == "__main__":
    sys.exit(main())
