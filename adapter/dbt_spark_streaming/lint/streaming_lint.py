"""`dbt-spark-streaming lint`: operations a streaming model cannot run, caught before any run
(this repository's `make lint` runs it too).

dbt parses the project (no Spark needed) to say which models are `streaming_table`s, with
their config resolved the way dbt resolves it and then read as a run reads it (a config that
cannot run is reported too); sqlfluff parses each one's SQL with the project's `.sqlfluff`. ORDER BY and LIMIT (outside an aggregate in complete mode), window functions
(OVER ...) and DISTINCT aggregates are reported with the advice the run-time error gives.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from typing import TYPE_CHECKING, Optional

from dbt_spark_streaming.config.materializations import STREAM_MATERIALIZATIONS
from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.errors import ConfigError, cannot_run
from dbt_spark_streaming.lint import sqlfluff_settings

if TYPE_CHECKING:
    from sqlfluff.core import Linter


@dataclass(frozen=True)
class StreamingModel:
    name: str
    path: Path
    output_mode: str
    config_error: str | None = None  # the model's config cannot run: what a run would say


@dataclass(frozen=True)
class Finding:
    model: StreamingModel
    line: int
    column: int
    problem: str

    def __str__(self) -> str:
        return f"{os.path.relpath(self.model.path)}:{self.line}:{self.column}: {self.problem}"


def streaming_models(project_dir: Path, profiles_dir: Optional[Path] = None) -> list[StreamingModel]:
    """The project's streaming models, as dbt parses them (no Spark)."""
    from dbt.cli.main import dbtRunner

    with tempfile.TemporaryDirectory() as target:
        args = ["parse", "--quiet", "--target-path", target, "--log-path", target, "--project-dir", str(project_dir)]
        parsed = dbtRunner().invoke([*args, *(["--profiles-dir", str(profiles_dir)] if profiles_dir else [])])
        if not parsed.success:
            raise SystemExit(f"streaming lint: dbt could not parse {project_dir}: {parsed.exception}")
        manifest = parsed.result
    manifest.build_flat_graph()
    graph = manifest.flat_graph
    return sorted(
        (
            _streaming_model(node, graph, project_dir)
            for node in graph["nodes"].values()
            if node["resource_type"] == "model"
            and node["config"].get("materialized") in STREAM_MATERIALIZATIONS
        ),
        key=lambda model: str(model.path),
    )


def _streaming_model(node: dict, graph: dict, project_dir: Path) -> StreamingModel:
    path = project_dir / node["original_file_path"]
    try:
        config = read_model_config(node, graph)
    except ConfigError as error:
        return StreamingModel(node["name"], path, "append", config_error=str(error))
    return StreamingModel(node["name"], path, config.output_mode)


def findings(model: StreamingModel, linter: "Linter") -> Iterator[Finding]:
    if model.config_error:
        yield Finding(model, 1, 1, model.config_error)
        return
    tree = next(linter.parse_path(str(model.path))).tree
    if tree is None:
        return  # unparsable SQL: sqlfluff lint, run first, reports it
    for segment in tree.recursive_crawl("orderby_clause", "limit_clause", "over_clause", "function"):
        operation = _operation(segment, model)
        if operation:
            line, column = segment.pos_marker.source_position()
            yield Finding(model, line, column, cannot_run(model.name, operation))


def _operation(segment, model: StreamingModel) -> str | None:
    if segment.is_type("orderby_clause"):
        inside_window = segment.get_parent() and segment.get_parent()[0].is_type("window_specification")
        if not inside_window and model.output_mode != "complete":
            return "ORDER BY"
    elif segment.is_type("limit_clause"):
        if model.output_mode != "complete":  # a top-n over an aggregate is recomputed each batch
            return "LIMIT"
    elif segment.is_type("over_clause"):
        return "a window function (OVER ...)"
    elif segment.is_type("function"):
        contents = segment.get_child("function_contents")
        bracketed = contents.get_child("bracketed") if contents else None
        if bracketed and any(k.raw.lower() == "distinct" for k in bracketed.get_children("keyword")):
            return "a DISTINCT aggregation"
    return None


def sql_linter(project_dir: Path) -> "Linter":
    """sqlfluff with the project's own .sqlfluff, or the adapter's starting settings where the
    project's name no dialect (said on the terminal)."""
    try:
        from sqlfluff.core import Linter
    except ImportError:
        raise SystemExit("streaming lint: sqlfluff is not installed: pip install 'dbt-spark-streaming[lint]'") from None
    config, starting = sqlfluff_settings.project_config(project_dir)
    if starting:
        print(f"streaming lint: the project's sqlfluff settings name no dialect; its models are read with "
              f"the adapter's starting settings (sparksql, jinja with dbt's builtins). "
              f"`dbt-spark-streaming init` writes them to {project_dir / sqlfluff_settings.PROJECT_SETTINGS}.")
    return Linter(config=config)


def lint(project_dir: Path, profiles_dir: Optional[Path] = None) -> int:
    """Prints each finding and a summary line; 1 when something cannot run."""
    linter = sql_linter(project_dir)
    models = streaming_models(project_dir, profiles_dir)
    found = [finding for model in models for finding in findings(model, linter)]
    for finding in found:
        print(finding)
    print(f"streaming lint: {len(models)} streaming models, {len(found)} problems")
    return 1 if found else 0


def main(argv: list[str] | None = None, project_dir: Optional[Path] = None,
         profiles_dir: Optional[Path] = None) -> int:
    parser = argparse.ArgumentParser(prog="dbt-spark-streaming lint", description=__doc__.split("\n")[0])
    parser.add_argument("--project-dir", type=Path, default=project_dir or Path.cwd())
    parser.add_argument("--profiles-dir", type=Path, default=profiles_dir)
    args = parser.parse_args(argv)
    return lint(args.project_dir.resolve(), args.profiles_dir)


if __name__ == "__main__":
    sys.exit(main())
