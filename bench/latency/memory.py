"""The always-on service's resident memory: its Python process and every process under it (the
JVM that pyspark starts, and anything else it started), each one's VmRSS read from /proc."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Resident:
    pid: int
    name: str
    kib: int


def process_tree(pid: int, proc: Path = PROC) -> list[int]:
    """`pid` and its descendants (by each process's parent in /proc/<pid>/stat), parents first."""
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # ended meanwhile
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, index = [pid], 0
    while index < len(tree):
        tree.extend(sorted(children.get(tree[index], [])))
        index += 1
    return tree


def resident(pid: int, proc: Path = PROC) -> Resident | None:
    """The process's name and VmRSS (KiB, 0 for a zombie); None once it is gone."""
    try:
        lines = (proc / str(pid) / "status").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in lines if ":" in line)
    rss = fields.get("VmRSS", "0 kB").split()
    return Resident(pid, fields.get("Name", "?").strip(), int(rss[0]))


def tree_resident(pid: int, proc: Path = PROC) -> list[Resident]:
    """Each process of `pid`'s tree still there, `pid` first."""
    return [found for found in (resident(member, proc) for member in process_tree(pid, proc)) if found]


def megabytes(found: list[Resident]) -> float:
    return sum(process.kib for process in found) / 1024
