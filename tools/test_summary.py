#!/usr/bin/python3
"""Counts test cases after `meson test` from Meson's JUnit log (which holds
every GoogleTest case of the gtest-protocol tests and one case per other
test) and prints "N passed, N failed" as the last line. A test whose Meson
result failed but left no failing case in the log (a crash before any XML)
counts as one failure.

Each argument is a build folder, whose meson-logs/testlog.* it reads, or
FOLDER:LOGBASE for the logs of `meson test --logbase LOGBASE`
(meson-logs/LOGBASE.*), e.g. `build build-asan build:slurmlog`. A skipped
plain test (exit 77) prints the last line of its output, its reason."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET


def count(build: pathlib.Path, logbase: str = "testlog"):
    passed = failed = skipped = 0
    failing = set()  # Meson test names with a failing case in the JUnit log
    junit = build / "meson-logs" / f"{logbase}.junit.xml"
    if junit.exists():
        for suite in ET.parse(junit).getroot().iter("testsuite"):
            sname = suite.get("name", "")
            plain = "." not in sname  # "project": one case per plain test, named as in the JSON log
            for case in suite.iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failed += 1
                    # gtest suites are "project.test.Suite": the Meson test is the middle part
                    failing.add(case.get("name", "") if plain else sname.split(".")[1])
                elif case.find("skipped") is not None or case.get("status") == "notrun":
                    skipped += 1
                    out = case.findtext("system-out") or ""
                    if plain and out.strip():
                        print(f"skipped {case.get('name', '')}: {out.strip().splitlines()[-1]}")
                else:
                    passed += 1
    log = build / "meson-logs" / f"{logbase}.json"
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and rec.get("name") not in failing:
                failed += 1
    return passed, failed, skipped


def main(args) -> int:
    """Sums the counts of one or more build folders (or FOLDER:LOGBASE)."""
    passed = failed = skipped = 0
    for arg in args:
        folder, _, logbase = arg.rpartition(":") if ":" in arg else (arg, "", "testlog")
        p, f, s = count(pathlib.Path(folder), logbase)
        passed, failed, skipped = passed + p, failed + f, skipped + s
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
