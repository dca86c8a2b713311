"""docs/BENCHMARKS.md rewritten by a full `make bench` (bench/harness/doc.py): the sections the
run does not write stay, each where it stood."""

from __future__ import annotations

from bench.harness.doc import keep_sections

CLOSING = ["```", "bench: x=1", "```"]


def doc(*sections: str, closing: bool = True) -> str:
    lines = ["# Benchmarks", ""]
    for heading in sections:
        lines += [f"## {heading}", "", f"figures of {heading}", ""]
    return "\n".join(lines + (CLOSING if closing else [])) + "\n"


def test_a_section_the_run_does_not_write_stays_where_it_stood():
    earlier = doc("1. a", "6. run cost", "7. soak history", "8. cdc", "13. delta commit")
    written = doc("1. a", "6. run cost", "8. cdc")
    kept = keep_sections(written, earlier)
    headings = [line for line in kept.split("\n") if line.startswith("## ")]
    assert headings == ["## 1. a", "## 6. run cost", "## 7. soak history", "## 8. cdc", "## 13. delta commit"]
    assert "figures of 7. soak history" in kept and "figures of 13. delta commit" in kept
    assert kept.rstrip("\n").split("\n")[-3:] == CLOSING  # the summary block stays last


def test_a_section_the_run_writes_is_the_runs():
    earlier = doc("1. a").replace("figures of 1. a", "old figures")
    assert "old figures" not in keep_sections(doc("1. a"), earlier)
