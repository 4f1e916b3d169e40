#!/usr/bin/env python3
"""Summarises one run of the HTTP cache conformance suite (http-tests/cache-tests).

    summarize.py --meta tests-meta.json RESULTS.json [--label NAME]
                 [--markdown FILE] [--table-row] [--json]

`tests-meta.json` is the suite's test list (every test's id, name, kind,
depends_on, spec anchors, browser_only), dumped by run.sh from the suite's own
tests/index.mjs, so this script never hard-codes a test. RESULTS.json is what
the suite's command-line client prints: test id -> true, or [error kind, message].

Counting follows the suite's results page (its lib/results.mjs), for the tests a
reverse proxy runs (browser_only ones are skipped by the client); this is how the
issue's table counts (nginx 1.22: 151 passed, 29 required failures):

* passed             tests the page marks ✅: a required or optimal test that
                     passed, with every test it depends on passed;
* required failures  tests the page marks ⛔️: kind "required" (the default), not
                     passed, not a setup failure, every dependency passed;
* failed             every required or optimal test that is not ✅: ⛔️, ⚠️ (optimal
                     behaviour missing), 🔹 (setup failed), ↻ (retried) and ⚪️
                     (a dependency failed);
* checks             "check" tests are informational (Y / N) and counted apart.

Nothing here talks to the network.
"""

import argparse
import datetime
import json
import os
import sys

# RFC 9111 section for each spec anchor the suite uses (httpwg.org/specs/rfc9111.html).
RFC9111_SECTIONS = {
    "delta-seconds": "1.2.2",
    "caching.overview": "2",
    "response.cacheability": "3",
    "storing.fields": "3.1",
    "update": "3.2",
    "incomplete.responses": "3.3",
    "combining.responses": "3.4",
    "caching.authenticated.responses": "3.5",
    "constructing.responses.from.caches": "4",
    "caching.negotiated.responses": "4.1",
    "expiration.model": "4.2",
    "calculating.freshness.lifetime": "4.2.1",
    "heuristic.freshness": "4.2.2",
    "age.calculations": "4.2.3",
    "serving.stale.responses": "4.2.4",
    "validation.model": "4.3",
    "validation.sent": "4.3.1",
    "validation.received": "4.3.2",
    "validation.response": "4.3.3",
    "freshening.responses": "4.3.4",
    "head.effects": "4.3.5",
    "invalidation": "4.4",
    "field.age": "5.1",
    "field.cache-control": "5.2",
    "cache-request-directive": "5.2.1",
    "cache-request-directive.max-age": "5.2.1.1",
    "cache-request-directive.max-stale": "5.2.1.2",
    "cache-request-directive.min-fresh": "5.2.1.3",
    "cache-request-directive.no-cache": "5.2.1.4",
    "cache-request-directive.no-store": "5.2.1.5",
    "cache-request-directive.no-transform": "5.2.1.6",
    "cache-request-directive.only-if-cached": "5.2.1.7",
    "cache-response-directive": "5.2.2",
    "cache-response-directive.max-age": "5.2.2.1",
    "cache-response-directive.must-revalidate": "5.2.2.2",
    "cache-response-directive.must-understand": "5.2.2.3",
    "cache-response-directive.no-cache": "5.2.2.4",
    "cache-response-directive.no-store": "5.2.2.5",
    "cache-response-directive.no-transform": "5.2.2.6",
    "cache-response-directive.private": "5.2.2.7",
    "cache-response-directive.proxy-revalidate": "5.2.2.8",
    "cache-response-directive.public": "5.2.2.9",
    "cache-response-directive.s-maxage": "5.2.2.10",
    "cache.control.extensions": "5.2.3",
    "field.expires": "5.3",
    "field.pragma": "5.4",
    "field.warning": "5.5",
}

# Anchors that belong to another specification than RFC 9111.
OTHER_SPECS = {
    "field.date": "RFC 9110 §6.6.1",
}


def rfc_sections(anchors):
    """Readable RFC references for a test's spec anchors ("RFC 9111 §4.2.1", a URL...)."""
    out = []
    for anchor in anchors:
        if anchor in RFC9111_SECTIONS:
            out.append("RFC 9111 §" + RFC9111_SECTIONS[anchor])
        elif anchor in OTHER_SPECS:
            out.append(OTHER_SPECS[anchor])
        elif anchor.startswith("http"):
            if "rfc9213" in anchor:
                out.append("RFC 9213 (CDN-Cache-Control)")
            elif "rfc5861" in anchor:
                out.append("RFC 5861 §3 (stale-while-revalidate)")
            elif "rfc8246" in anchor:
                out.append("RFC 8246 §2 (immutable)")
            else:
                out.append(anchor)
        else:
            out.append(anchor)
    seen = []
    for item in out:
        if item not in seen:
            seen.append(item)
    return seen


class Summary:
    """The suite's verdict for every test of one run."""

    def __init__(self, meta, results):
        self.meta = meta
        self.by_id = {t["id"]: t for t in meta}
        self.results = results
        self.verdicts = {}
        for test in meta:
            if test.get("browser_only"):
                continue
            self.verdicts[test["id"]] = self.verdict(test["id"])

    def verdict(self, test_id):
        """One of pass, yes, fail, optional_fail, no, setup_fail, retry,
        dependency_fail, untested: the results page's classification."""
        if test_id in self.verdicts:
            return self.verdicts[test_id]
        test = self.by_id[test_id]
        result = self.results.get(test_id)
        if result is None:
            return "untested"
        for dep in test.get("depends_on", []):
            if dep in self.by_id and self.verdict(dep) not in ("pass", "yes"):
                return "dependency_fail"
        if isinstance(result, list) and result and result[0] == "Setup":
            return "retry" if len(result) > 1 and result[1] == "retry" else "setup_fail"
        kind = test.get("kind", "required")
        if kind == "required":
            return "pass" if result is True else "fail"
        if kind == "optimal":
            return "pass" if result is True else "optional_fail"
        if kind == "check":
            return "yes" if result is True else "no"
        raise ValueError(f"unknown test kind {kind!r} for {test_id}")

    def ran(self):
        return [t for t in self.meta if not t.get("browser_only") and t["id"] in self.results]

    def passed(self):
        """✅: required or optimal tests passed (dependencies passed too)."""
        return [t for t in self.ran() if self.verdicts[t["id"]] == "pass"]

    def failed(self):
        """Required or optimal tests that are not ✅, whatever the reason."""
        return [t for t in self.ran()
                if t.get("kind", "required") != "check" and self.verdicts[t["id"]] != "pass"]

    def checks(self, verdict):
        """Check tests answered `verdict` ("yes" or "no")."""
        return [t for t in self.ran() if self.verdicts[t["id"]] == verdict]

    def not_passing(self):
        """Every test that ran and is not ✅ or Y, checks included."""
        return [t for t in self.ran() if self.verdicts[t["id"]] not in ("pass", "yes")]

    def required_failures(self):
        return [t for t in self.ran() if self.verdicts[t["id"]] == "fail"]

    def blocked_by(self, test_id):
        """Tests not judged because `test_id` (directly) did not pass."""
        return [t for t in self.ran()
                if test_id in (t.get("depends_on") or []) and self.verdicts[t["id"]] == "dependency_fail"]

    def failing_by_verdict(self):
        groups = {}
        for test in self.not_passing():
            groups.setdefault(self.verdicts[test["id"]], []).append(test)
        return groups


def detail(result):
    if isinstance(result, list):
        return ": ".join(str(x) for x in result)
    return str(result)


def markdown(summary, label):
    """The failing tests as markdown: required failures first, each with the
    suite's description, the RFC sections it concerns and the client's message."""
    lines = []
    total = len(summary.ran())
    lines.append(f"{label}: **{len(summary.passed())} passed, {len(summary.failed())} failed, "
                 f"{len(summary.required_failures())} required failures** ({total} tests ran; "
                 f"checks: {len(summary.checks('yes'))} yes, {len(summary.checks('no'))} no).")
    lines.append("")
    order = [
        ("fail", "Required failures (the suite shows ⛔️)"),
        ("optional_fail", "Optimal behaviour missing (⚠️, not a conformance failure)"),
        ("no", "Checks answered \"no\" (informational)"),
        ("setup_fail", "Setup failures (🔹: the test could not set up its premise)"),
        ("retry", "Retries (↻)"),
        ("dependency_fail", "Not judged: a test they depend on failed (⚪️)"),
        ("untested", "Untested"),
    ]
    lines.append("`blocks`: how many tests are not judged (⚪️) because this one did not pass; "
                 "making it pass lets them count.")
    lines.append("")
    groups = summary.failing_by_verdict()
    for verdict, title in order:
        tests = groups.get(verdict, [])
        if not tests:
            continue
        lines.append(f"#### {title}: {len(tests)}")
        lines.append("")
        lines.append("| test id | description | RFC | result | blocks |")
        lines.append("|---|---|---|---|---:|")
        for test in tests:
            refs = ", ".join(rfc_sections(test.get("spec_anchors") or test.get("suite_anchors") or []))
            name = test["name"].replace("|", "\\|")
            res = detail(summary.results[test["id"]]).replace("|", "\\|")
            blocked = len(summary.blocked_by(test["id"]))
            lines.append(f"| `{test['id']}` | {name} | {refs or '-'} | {res} | {blocked or ''} |")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", help="the client's JSON output")
    parser.add_argument("--meta", required=True, help="tests-meta.json written by run.sh")
    parser.add_argument("--label", default="proxy")
    parser.add_argument("--markdown", help="write the failing tests as markdown to this file")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--report", help="prepend this run's failing tests to this markdown file")
    parser.add_argument("--note", default="", help="what was measured, for the report's heading")
    args = parser.parse_args()

    with open(args.meta) as f:
        meta = json.load(f)
    with open(args.results) as f:
        text = f.read()
    # The client prints JSON; tolerate stray lines (server warnings) before it.
    start = text.find("{")
    if start < 0:
        print(f"{args.results}: no JSON results in the client's output", file=sys.stderr)
        return 2
    results = json.loads(text[start:])

    summary = Summary(meta, results)
    figures = {
        "proxy": args.label,
        "ran": len(summary.ran()),
        "passed": len(summary.passed()),
        "failed": len(summary.failed()),
        "required_failures": len(summary.required_failures()),
        "checks_yes": len(summary.checks("yes")),
        "checks_no": len(summary.checks("no")),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{args.label}: {figures['passed']} passed, {figures['failed']} failed, "
              f"{figures['required_failures']} required failures ({figures['ran']} tests ran; "
              f"checks {figures['checks_yes']} yes / {figures['checks_no']} no)")
        print("  required failures: " + (" ".join(t["id"] for t in summary.required_failures()) or "none"))
        print("  failed (not ✅): " + (" ".join(t["id"] for t in summary.failed()) or "none"))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(summary, args.label) + "\n")
    if args.report:
        prepend_report(args.report, markdown(summary, args.label), args.label, args.note)
    return 0


REPORT_TITLE = (
    "# Conformance runs (http-tests/cache-tests), newest first\n\n"
    "Written by `Benchmarks/conformance/run.sh --report`. passed = ✅ (required or optimal tests "
    "passed, dependencies passed too), required failures = ⛔️, failed = every required or optimal "
    "test that is not ✅; checks (Y/N) are informational. Each test's RFC column comes from the "
    "suite's spec anchors.\n\n"
)


def prepend_report(path, section, label, note):
    """Puts this run's section at the top of the report file, under its title."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    heading = f"## {when}: {label}" + (f" ({note})" if note else "")
    old = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    first_run = old.find("\n## ")
    old = old[first_run + 1:] if first_run >= 0 else ""
    with open(path, "w") as f:
        f.write(REPORT_TITLE + heading + "\n\n" + section + "\n" + old)


if __name__ == "__main__":
    sys.exit(main())
