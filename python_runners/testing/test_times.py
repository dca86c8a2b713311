"""Where `make test`'s time goes: `python -m python_runners.testing.test_times [FOLDER] [--top N]`.

Each tier's pytest writes JUnit XML into FOLDER (.test-times/ by default, git-ignored); this
prints every tier's test count and wall time, then its N slowest tests (setup, call and teardown
together, as JUnit's `time` has them). A file of the whole suite (`all.xml`) is grouped by the
tier folder each test lives in. `--before FILE`: a JUnit file of an earlier run, its tests summed
by the tier their file is in today (found by file name under tests/), beside today's.
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
        tests.append(TestTime(_test_name(case.get("classname", ""), case.get("name", "")),
                              float(case.get("time") or 0), outcome))
    return sum(float(suite.get("time") or 0) for suite in suites), tests


def _test_name(classname: str, name: str) -> str:
    """pytest's id back from JUnit's dotted classname: `tests.<tier>.<module>.<Class>` ->
    `tests/<tier>/<module>.py::<Class>::<name>`."""
    parts = classname.split(".")
    module = next((i for i, part in enumerate(parts) if part[:1].isupper()), len(parts))
    return "::".join(["/".join(parts[:module]) + ".py", *parts[module:], name])


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


def before_by_tier(before: Path, tests_root: Path) -> dict[str, float]:
    """An earlier run's seconds by today's tier of each test's file (its name found under
    `tests_root`); a file no longer there counts as "gone"."""
    now = {path.name: path.relative_to(tests_root).parts[0] for path in tests_root.rglob("test_*.py")
           if len(path.relative_to(tests_root).parts) > 1}
    seconds: dict[str, float] = {}
    for test in read_junit(before)[1]:
        tier = now.get(test.name.split("::")[0].rsplit("/", 1)[-1], "gone")
        seconds[tier] = seconds.get(tier, 0.0) + test.seconds
    return seconds


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
    parser.add_argument("--before", type=Path, help="a JUnit file of an earlier run to set beside")
    parser.add_argument("--tests", type=Path, default=Path("tests"), help="where today's tiers are")
    args = parser.parse_args(argv)
    tiers = tiers_in(args.folder)
    if not tiers:
        print(f"No test times in {args.folder}/ (make test writes them).", file=sys.stderr)
        return 1
    print(report(tiers, args.top))
    if args.before:
        before = before_by_tier(args.before, args.tests)
        print(f"\n{'tier':<12}{'before, min':>12}{'now, min':>10}  (before: {args.before})")
        for tier in tiers:
            print(f"{tier.tier:<12}{before.pop(tier.tier, 0.0) / 60:>12.1f}{tier.wall_seconds / 60:>10.1f}")
        for tier, seconds in sorted(before.items()):
            print(f"{tier:<12}{seconds / 60:>12.1f}{'-':>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
