"""docs/config-reference.md, written from the settings each materialisation declares:
`python -m python_runners.ops.config_reference [--check]`.

The keys come from SETTINGS (and cdc's) in adapter/dbt_spark_streaming/config/settings.py, their
descriptions and defaults from DESCRIPTIONS beside them, so the reference lists what a model's
config check accepts. `--check` (in `make lint`) writes nothing and exits 1 naming each setting
without a description or without a row in the file, or when the file is not what this writes.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Mapping, Optional, Sequence

from dbt_spark_streaming.config import settings

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "config-reference.md"
COMMAND = "python -m python_runners.ops.config_reference"

# What each materialisation is, in a line, and the page that tells the rest.
MATERIALISATIONS: Mapping[str, tuple[str, str]] = {
    "streaming_table": ("The model's SELECT runs as a Spark Structured Streaming query into a Delta "
                        "table, each model with a checkpoint of its own.", "streaming-table.md"),
    "cdc_table": ("A feed of database changes applied by MERGE each micro-batch: the current row per "
                  "key (SCD type 1) or every version of it (SCD type 2).", "cdc.md"),
    "copy_into": ("Each run loads the files of its one file source that it has not loaded before, "
                  "and appends them to a Delta table.", "ingestion/copy_into.md"),
}

_ROW_KEY = re.compile(r"^\| `([\w]+)` \|")


Declared = Optional[Mapping[str, Sequence[str]]]
Descriptions = Optional[Mapping[str, settings.Description]]


def missing_descriptions(declared: Declared = None, descriptions: Descriptions = None) -> list[str]:
    """'<materialisation>.<key>' of each declared setting that has no description. `declared`
    and `descriptions` None: settings.SETTINGS and settings.DESCRIPTIONS as they are now."""
    declared, descriptions = _now(declared, descriptions)
    return [f"{materialized}.{key}" for materialized, keys in declared.items()
            for key in keys if key not in descriptions]


def reference_text(declared: Declared = None, descriptions: Descriptions = None) -> str:
    """The whole of docs/config-reference.md; a setting without a description gets an empty row,
    which the check reports."""
    declared, descriptions = _now(declared, descriptions)
    lines = [
        "# Config reference",
        "",
        f"Written by `{COMMAND}` from the settings each",
        "materialisation declares (adapter/dbt_spark_streaming/config/settings.py); `make lint` fails",
        "when this page is out of date. Edit the descriptions there, then run the command.",
        "",
        "Set a key in the model's `{{ config(...) }}`, in its YAML, or for a folder in",
        "`dbt_project.yml` (`+output_mode: complete`). A streaming model's config is read and checked",
        "once, before anything runs: a setting that cannot work is a dbt Compilation Error naming the",
        "model, the setting and what is allowed. Any other key is refused, naming the nearest valid",
        "one (`config 'outptu_mode' is not a streaming_table setting; did you mean 'output_mode'?`);",
        "dbt's own configs (`tags`, `meta`, `pre-hook`, ...) are fine, and a model's YAML",
        "`contract: {enforced: true}` holds for all three ([contracts](contracts.md)).",
    ]
    for materialized, keys in declared.items():
        summary, page = MATERIALISATIONS.get(materialized, ("", ""))
        lines += ["", f"## {materialized}", ""]
        if summary:
            lines += [f"{summary} More: [{page}]({page}).", ""]
        lines += ["| key | what it does | default |", "| --- | --- | --- |"]
        for key in keys:
            described = descriptions.get(key)
            what, default = (described.what, described.default) if described else ("", "")
            lines.append(f"| `{key}` | {_cell(what)} | {_cell(default)} |")
        also = settings.ALSO_READ.get(materialized)
        if also:
            lines += ["", "Also read, so that a folder's setting can cover its models: "
                      + ", ".join(f"`{key}`" for key in also)
                      + " (only the value that fits this materialisation; any other is refused)."]
    return "\n".join(lines) + "\n"


def _now(declared: Declared, descriptions: Descriptions):
    return (settings.SETTINGS if declared is None else declared,
            settings.DESCRIPTIONS if descriptions is None else descriptions)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def keys_without_row(text: str, declared: Declared = None) -> list[str]:
    """'<materialisation>.<key>' of each declared setting the reference's table for that
    materialisation has no row for."""
    declared, _ = _now(declared, None)
    rows: dict[str, set[str]] = {}
    section = None
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
            rows.setdefault(section, set())
        elif section is not None and (match := _ROW_KEY.match(line)):
            rows[section].add(match.group(1))
    return [f"{materialized}.{key}" for materialized, keys in declared.items()
            for key in keys if key not in rows.get(materialized, set())]


def problems(path: Optional[Path] = None, declared: Declared = None,
             descriptions: Descriptions = None) -> list[str]:
    """What is wrong with the reference at `path` (None: docs/config-reference.md), one sentence
    each; [] when it is up to date."""
    path = REFERENCE if path is None else path
    found = [f"{key} has no description: add one to DESCRIPTIONS in "
             "adapter/dbt_spark_streaming/config/settings.py"
             for key in missing_descriptions(declared, descriptions)]
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    found += [f"{key} has no row in {path.name}" for key in keys_without_row(text, declared)]
    if text != reference_text(declared, descriptions):
        found.append(f"{path.name} is not up to date: run `{COMMAND}`")
    return found


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if the page is stale")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        for problem in found:
            print(f"config reference: {problem}")
        if not found:
            print("config reference: every setting described, docs/config-reference.md up to date")
        return 1 if found else 0
    missing = missing_descriptions()
    if missing:
        print("config reference: no description for " + ", ".join(missing)
              + " (DESCRIPTIONS in adapter/dbt_spark_streaming/config/settings.py)", file=sys.stderr)
        return 1
    REFERENCE.write_text(reference_text(), encoding="utf-8")
    print(f"Wrote {REFERENCE.relative_to(REFERENCE.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
