"""Where `make test`'s time goes: `python -m python_runners.testing.test_times [FOLDER] [--top N]`.

Each tier's pytest writes JUnit XML into FOLDER (.test-times/ by default, git-ignored); this
prints every tier's test count and wall time, then its N slowest tests (setup, call and teardown
together, as JUnit's `time` has them). A file of the whole suite (`all.xml`) is grouped by the
tier folder each test lives in.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

DEFAULT_FOLDER = Path(".test-times")
TIER_ORDER = ("unit", "adapter", "session", "processes")


@dataclass(frozen=True)
class TestTime:
    name: str  # file::test, as pytest names it
    seconds: float
    outcome: str  # passed, failed, error or skipped


@dataclass(frozen=True)
class TierTimes:
    tier: str
    wall_seconds: float
    tests: list[TestTime]

    def slowest(self, count: int) -> list[TestTime]:
        return sorted(self.tests, key=lambda test: test.seconds, reverse=True)[:count]


def read_junit(path: Path) -> tuple[float, list[TestTime]]:
    """A JUnit file's wall time (its suites' `time`) and its tests."""
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tests = []
    for case in root.iter("testcase"):
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        file = case.get("classname", "").replace(".", "/")
        tests.append(TestTime(f"{file}.py::{case.get('name')}", float(case.get("time") or 0), outcome))
    return sum(float(suite.get("time") or 0) for suite in suites), tests


def tier_of(test: TestTime) -> str:
    """The tier folder under tests/ a test lives in (a file right under tests/ is its own tier)."""
    parts = test.name.split("::")[0].split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else "tests"


def tiers_in(folder: Path) -> list[TierTimes]:
    tiers = []
    for path in sorted(folder.glob("*.xml")):
        wall, tests = read_junit(path)
        if path.stem != "all":
            tiers.append(TierTimes(path.stem, wall, tests))
            continue
        for tier in sorted({tier_of(test) for test in tests}):
            mine = [test for test in tests if tier_of(test) == tier]
            tiers.append(TierTimes(tier, sum(test.seconds for test in mine), mine))
    order = {tier: index for index, tier in enumerate(TIER_ORDER)}
    return sorted(tiers, key=lambda tier: (order.get(tier.tier, len(order)), tier.tier))


def report(tiers: list[TierTimes], top: int) -> str:
    lines = [f"{'tier':<12}{'tests':>7}{'minutes':>9}"]
    lines += [f"{tier.tier:<12}{len(tier.tests):>7}{tier.wall_seconds / 60:>9.1f}" for tier in tiers]
    total = sum(tier.wall_seconds for tier in tiers)
    lines.append(f"{'all':<12}{sum(len(tier.tests) for tier in tiers):>7}{total / 60:>9.1f}")
    for tier in tiers:
        lines += ["", f"{tier.tier}: the {min(top, len(tier.tests))} slowest"]
        lines += [f"{test.seconds:>8.1f} s  {test.name}" + ("" if test.outcome == "passed" else f"  ({test.outcome})")
                  for test in tier.slowest(top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    tiers = tiers_in(args.folder)
    if not tiers:
        print(f"No test times in {args.folder}/ (make test writes them).", file=sys.stderr)
        return 1
    print(report(tiers, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
