"""Writing docs/BENCHMARKS.md: markdown tables, a run's line, and replacing one section in place.

Each part renders its own section (its package's doc.py or report.py); a section is a list of
lines starting with its `## ` heading. The document ends with a closing summary block (```, then
`bench: ...`), before which a section it does not have yet is added.
"""

from __future__ import annotations

import json
from pathlib import Path

from python_runners import REPO_ROOT

BENCHMARKS_DOC = REPO_ROOT / "docs" / "BENCHMARKS.md"
NOT_RUN = "_Not run in this benchmark run (left out with `--parts`)._"


def table(header: list[str], rows: list[list]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows),
    ]


def seconds(value: float) -> str:
    return f"{value:.1f} s"


def plural(count: float, noun: str) -> str:
    return f"{count:,.0f} {noun}" + ("" if count == 1 else "s")


def run_line(run: dict, code: str | None = None) -> str:
    """`Run: <when> (UTC), <n> min, with `<command>`; load average ...` (and the code measured)."""
    return (f"Run: {run['started_at']} (UTC), {run['duration_min']:.1f} min, with `{run['command']}`; "
            f"load average at start {run['load_start']}, at end {run['load_end']}"
            + ("." if code is None else f"; code measured: {code}."))


def read_document(path: Path) -> str:
    return path.read_text() if path.exists() else "# Benchmarks\n"


def _closing_summary(lines: list[str], index: int) -> bool:
    """Whether the document's closing summary block (```, then `bench: ...`) starts at `index`."""
    return lines[index] == "```" and index + 1 < len(lines) and lines[index + 1].startswith("bench: ")


def _section_bounds(lines: list[str], heading: str) -> tuple[int, int] | None:
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("## ") or _closing_summary(lines, i)), len(lines))
    return start, end


def section_of(document_text: str, heading: str) -> list[str] | None:
    """The document's section under `heading` as it stands, or None when it has none."""
    lines = document_text.split("\n")
    bounds = _section_bounds(lines, heading)
    return lines[bounds[0]:bounds[1]] if bounds else None


def section_headings(document_text: str) -> list[str]:
    """The document's `## ` headings, in order."""
    return [line.strip() for line in document_text.split("\n") if line.startswith("## ")]


def keep_sections(document_text: str, earlier_text: str) -> str:
    """The document with every section of `earlier_text` that it lacks, each put after the
    section that came before it there (a run that does not write a section keeps it)."""
    previous = None
    for heading in section_headings(earlier_text):
        lines = document_text.rstrip("\n").split("\n")
        if _section_bounds(lines, heading) is None:
            section = section_of(earlier_text, heading)
            after = _section_bounds(lines, previous) if previous else None
            document_text = (replace_section(document_text, section) if after is None
                             else _splice(lines, (after[1], after[1]), section))
        previous = heading
    return document_text


def replace_section(document_text: str, section: list[str]) -> str:
    """The document with the section headed like `section` replaced by it (added before the
    closing summary block if it has none); everything else as it was."""
    lines = document_text.rstrip("\n").split("\n")
    bounds = _section_bounds(lines, section[0].strip())
    if bounds is None:
        at = next((i for i in range(len(lines)) if _closing_summary(lines, i)), len(lines))
        bounds = (at, at)
    return _splice(lines, bounds, section)


def _splice(lines: list[str], bounds: tuple[int, int], section: list[str]) -> str:
    """The document's lines with those between `bounds` replaced by `section`."""
    return "\n".join(lines[:bounds[0]] + list(section) + lines[bounds[1]:]).rstrip("\n") + "\n"


def add_doc_arguments(parser) -> None:
    """--result, --doc and --no-doc of a benchmark that rewrites its own section."""
    parser.add_argument("--result", type=Path, help="also write the figures to this JSON file")
    parser.add_argument("--doc", type=Path, default=BENCHMARKS_DOC)
    parser.add_argument("--no-doc", action="store_true", help="leave docs/BENCHMARKS.md alone")


def publish_section(result: dict, section: list[str], args, name: str, document: str | None = None) -> None:
    """A benchmark's own section: its result to --result, the section printed (its summary block
    as the bare line, last) and, unless --no-doc, written into --doc (`document`, or as it stands)."""
    if args.result:
        args.result.write_text(json.dumps(result, indent=1))
    print()
    print("\n".join(section[:-4]))  # the summary line last
    print(result["summary"])
    if not args.no_doc:
        text = read_document(args.doc) if document is None else document
        args.doc.write_text(replace_section(text, section))
        print(f"bench {name}: wrote its section of {args.doc}")
