"""`make test`'s time report (python_runners/testing/test_times.py) on JUnit files of its own."""

from __future__ import annotations

from python_runners.testing.test_times import before_by_tier, main, report, tiers_in

UNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3" time="4.5">
<testcase classname="tests.unit.test_a" name="test_fast" time="0.01"/>
<testcase classname="tests.unit.test_a" name="test_slow[x]" time="2.5"/>
<testcase classname="tests.unit.test_b" name="test_broken" time="1.0"><failure message="no"/></testcase>
</testsuite></testsuites>"""
WHOLE_SUITE = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3" time="100">
<testcase classname="tests.test_old" name="test_flat" time="30"/>
<testcase classname="tests.processes.kill.test_k" name="test_kill" time="60"/>
<testcase classname="tests.session.test_s.TestGroup" name="test_s" time="10"/>
</testsuite></testsuites>"""


def test_a_tier_file_gives_its_wall_time_and_its_slowest_tests_first(tmp_path):
    (tmp_path / "unit.xml").write_text(UNIT)

    [unit] = tiers_in(tmp_path)

    assert (unit.tier, unit.wall_seconds, len(unit.tests)) == ("unit", 4.5, 3)
    assert [test.name for test in unit.slowest(2)] == [
        "tests/unit/test_a.py::test_slow[x]", "tests/unit/test_b.py::test_broken"]
    printed = report([unit], top=2)
    assert "unit" in printed and "2.5 s  tests/unit/test_a.py::test_slow[x]" in printed
    assert "(failure)" in printed and "test_fast" not in printed


def test_a_whole_suite_file_is_grouped_by_tier_folder_in_tier_order(tmp_path):
    (tmp_path / "all.xml").write_text(WHOLE_SUITE)

    tiers = tiers_in(tmp_path)

    assert [(tier.tier, tier.wall_seconds) for tier in tiers] == [
        ("session", 10.0), ("processes", 60.0), ("tests", 30.0)]
    assert tiers[0].tests[0].name == "tests/session/test_s.py::TestGroup::test_s"


def test_no_files_is_said_and_fails(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert "make test writes them" in capsys.readouterr().err


def test_an_earlier_run_is_summed_by_the_tier_its_files_are_in_today(tmp_path):
    tests = tmp_path / "tests"
    (tests / "session").mkdir(parents=True)
    (tests / "processes" / "kill").mkdir(parents=True)
    (tests / "session" / "test_s.py").write_text("")
    (tests / "processes" / "kill" / "test_k.py").write_text("")
    earlier = tmp_path / "before.xml"
    earlier.write_text(WHOLE_SUITE.replace("tests.processes.kill.test_k", "tests.test_k")
                       .replace("tests.session.test_s.TestGroup", "tests.test_s.TestGroup"))

    assert before_by_tier(earlier, tests) == {"gone": 30.0, "processes": 60.0, "session": 10.0}
