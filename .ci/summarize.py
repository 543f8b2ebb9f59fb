"""Sum every CI leg into one closing line, `N passed, M failed`, and exit non-zero on any failure.

A leg that wrote a JUnit report counts its test cases; a leg without one (lint, a service check,
an install) counts as a single check. A leg whose command failed but whose report shows no
failure (a crash after the tests, a traceback in the server log) still counts one failure.
"""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def junit_counts(path: Path) -> tuple[int, int, int]:
    """(passed, failed, skipped) from a JUnit XML file: every <testcase> element once."""
    root = ET.parse(path).getroot()  # noqa: S314 - our own test runners' reports
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(reports: Path) -> int:
    passed = failed = skipped = 0
    for status_file in sorted(reports.glob("*.status")):
        name = status_file.stem
        ok = status_file.read_text().strip() == "ok"
        report = reports / f"{name}.xml"
        if report.exists():
            try:
                p, f, s = junit_counts(report)
            except ET.ParseError:
                p, f, s = 0, 1, 0
            if not ok and f == 0:
                f = 1
        else:
            p, f, s = (1, 0, 0) if ok else (0, 1, 0)
        print(f"{name}: {p} passed, {f} failed, {s} skipped")
        passed, failed, skipped = passed + p, failed + f, skipped + s
    if not any(reports.glob("*.status")):
        failed = 1
    print(f"skipped in all: {skipped}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
