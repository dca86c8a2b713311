"""The soak's memory samples (bench/latency/memory.py) on a /proc tree built here: the service's
Python, the JVM under it and what they started, nothing of other processes."""

from __future__ import annotations

import os
from pathlib import Path

from bench.latency import memory


def process(proc: Path, pid: int, parent: int, name: str, rss_kib: int | None) -> None:
    folder = proc / str(pid)
    folder.mkdir()
    (folder / "stat").write_text(f"{pid} ({name}) S {parent} {pid} {pid} 0 -1 4194304 0 0 0 0 12 3\n")
    rss = "" if rss_kib is None else f"VmRSS:\t{rss_kib:8d} kB\n"
    (folder / "status").write_text(f"Name:\t{name}\nState:\tS (sleeping)\nPPid:\t{parent}\n"
                                   f"VmPeak:\t 9999999 kB\n{rss}Threads:\t40\n")


def fake_proc(tmp_path: Path) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    process(proc, 1, 0, "init", 10_000)
    process(proc, 100, 1, "python", 204_800)  # the service
    process(proc, 130, 100, "java", 1_048_576)  # its JVM
    process(proc, 120, 100, "python", 12_288)  # multiprocessing's resource tracker
    process(proc, 140, 130, "odd) name (x", 1_024)  # started by the JVM; a name with parentheses
    process(proc, 150, 130, "sh", None)  # a zombie: no VmRSS
    process(proc, 200, 1, "java", 3_000_000)  # another service's JVM
    (proc / "self").mkdir()
    (proc / "meminfo").write_text("MemTotal: 1 kB\n")
    return proc


def test_the_tree_under_the_service_parents_first(tmp_path):
    assert memory.process_tree(100, fake_proc(tmp_path)) == [100, 120, 130, 140, 150]


def test_its_resident_memory_python_plus_jvm_plus_what_they_started(tmp_path):
    found = memory.tree_resident(100, fake_proc(tmp_path))

    assert [(p.pid, p.name, p.kib) for p in found] == [
        (100, "python", 204_800), (120, "python", 12_288), (130, "java", 1_048_576),
        (140, "odd) name (x", 1_024), (150, "sh", 0)]
    assert memory.megabytes(found) == (204_800 + 12_288 + 1_048_576 + 1_024) / 1024


def test_a_process_gone_between_the_listing_and_its_status_is_left_out(tmp_path):
    proc = fake_proc(tmp_path)
    (proc / "140" / "status").unlink()

    assert [p.pid for p in memory.tree_resident(100, proc)] == [100, 120, 130, 150]


def test_a_service_already_gone_has_none(tmp_path):
    assert memory.tree_resident(999, fake_proc(tmp_path)) == []


def test_this_process_on_the_real_proc():
    found = memory.tree_resident(os.getpid())

    assert found[0].pid == os.getpid() and found[0].kib > 0
