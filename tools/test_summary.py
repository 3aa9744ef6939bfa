#!/usr/bin/python3
"""Counts test cases after `meson test` from Meson's JUnit log (which holds
every GoogleTest case of the gtest-protocol tests and one case per other
test) and prints "N passed, N failed" as the last line. A test whose Meson
result failed but left no failing case in the log (a crash before any XML)
counts as one failure."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET


def count(build: pathlib.Path):
    passed = failed = skipped = 0
    failing_suites = set()
    junit = build / "meson-logs" / "testlog.junit.xml"
    if junit.exists():
        for suite in ET.parse(junit).getroot().iter("testsuite"):
            for case in suite.iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed += 1
                    failing_suites.add(suite.get("name", "").split(".")[1] if "." in suite.get("name", "") else "")
                elif case.find("skipped") is not None or case.get("status") == "notrun":
                    skipped += 1
                else:
                    passed += 1
    log = build / "meson-logs" / "testlog.json"
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and rec.get("name") not in failing_suites:
                failed += 1
    return passed, failed, skipped


def main(builds) -> int:
    """Sums the counts of one or more build folders."""
    passed = failed = skipped = 0
    for b in builds:
        p, f, s = count(pathlib.Path(b))
        passed, failed, skipped = passed + p, failed + f, skipped + s
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
