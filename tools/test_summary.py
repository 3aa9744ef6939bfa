#!/usr/bin/python3
"""Counts test cases after `meson test`: every GoogleTest case from the XML
files the test binaries wrote, plus every non-GoogleTest Meson test, and
prints "N passed, N failed" as the last line."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET


def main(build: pathlib.Path) -> int:
    passed = failed = skipped = 0
    gtest_names = set()
    for xml in sorted((build / "tests" / "results").glob("*.xml")):
        gtest_names.add(xml.stem)
        root = ET.parse(xml).getroot()
        for case in root.iter("testcase"):
            if case.get("result") == "skipped" or case.find("skipped") is not None:
                skipped += 1
            elif case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            else:
                passed += 1
    log = build / "meson-logs" / "testlog.json"
    if log.exists():
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            name = rec.get("name", "").split(" / ")[-1]
            result = rec.get("result")
            if name in gtest_names:
                # A gtest binary that crashed wrote no XML for its cases: count it.
                if result not in ("OK", "EXPECTEDFAIL", "SKIP") and not (build / "tests" / "results" / f"{name}.xml").exists():
                    failed += 1
                continue
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
