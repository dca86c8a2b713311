"""The adapter as a user gets it: a wheel built from adapter/, installed into a fresh virtualenv
with nothing else from this repository, used by a new dbt project in a folder outside it.

The virtualenv's pip fetches the declared dependencies (PyPI; pip's cache makes the second time
quick), and its first Spark session fetches Delta Lake's jars from Maven Central into a cache of
the test's own, as on a new machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from python_runners import REPO_ROOT

pytestmark = pytest.mark.slow

PROJECT = "my_streams"
SCHEMA = "analytics"
RECIPE = REPO_ROOT / "docs" / "examples" / "ci"
BRONZE = """{{ config(materialized='streaming_table', output_mode='append') }}

select
    id,
    device,
    reading
from {{ source('landing', 'events') }}
"""
GOLD = """{{ config(materialized='streaming_table', output_mode='complete') }}

select
    device,
    count(*) as events,
    sum(reading) as total
from stream({{ ref('bronze_events') }})
group by device
"""


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 900, answers: str | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          input=answers)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """(the virtualenv's bin folder, an environment without this repository's settings)."""
    root = tmp_path_factory.mktemp("installed")
    # From a clean copy: setuptools would put a stale build/ folder's files in the wheel too.
    source = root / "source"
    shutil.copytree(REPO_ROOT / "adapter", source,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    wheels = root / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(source)],
        cwd=root, env=dict(os.environ))
    (wheel,) = wheels.glob("dbt_spark_streaming-*.whl")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=root, env=dict(os.environ))
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("LAKEHOUSE_", "SPARK_", "DBT_", "PYTHON", "VIRTUAL_ENV"))}
    env.update({"PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                "XDG_CACHE_HOME": str(root / "cache"), "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
                "SPARK_SHUFFLE_PARTITIONS": "2"})
    if "SPARK_SUBMIT_OPTS" in os.environ:  # the JIT setting of this tier's short drivers (conftest)
        env["SPARK_SUBMIT_OPTS"] = os.environ["SPARK_SUBMIT_OPTS"]
    if "PIP_CACHE_DIR" not in env:  # the user's pip cache, not the test's empty XDG cache
        env["PIP_CACHE_DIR"] = str(Path.home() / ".cache" / "pip")
    run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", f"{wheel}[lint]"],
        cwd=root, env=env, timeout=1800)
    return venv / "bin", env


def init_project(bin_folder: Path, env: dict[str, str], parent: Path) -> Path:
    """`dbt init` as a user answers it: the adapter (spark_streaming, second of the two
    installed), then the profile_template's questions: master and lakehouse_dir as offered, the
    schema, threads as offered."""
    profiles = parent / "profiles"
    profiles.mkdir()
    run([str(bin_folder / "dbt"), "init", PROJECT, "--profiles-dir", str(profiles)], cwd=parent, env=env,
        answers=f"2\n\n\n{SCHEMA}\n\n")
    return add_streams(parent / PROJECT)


def new_project(folder: Path) -> Path:
    """A dbt project written by hand, as docs/ci.md's project would be: a profile with dev,
    prod and ci targets, and the streaming models."""
    (folder / "models").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(textwrap.dedent(f"""
        name: {PROJECT}
        config-version: 2
        profile: {PROJECT}
    """))
    target = "type: spark_streaming\n      method: session\n      master: 'local[1]'\n      threads: 1"
    (folder / "profiles.yml").write_text(
        f"{PROJECT}:\n  target: dev\n  outputs:\n"
        + "".join(f"    {name}:\n      {target}\n      schema: {schema}\n"
                  for name, schema in (("dev", SCHEMA), ("prod", SCHEMA), ("ci", "ci")))
    )
    return add_streams(folder)


def add_streams(folder: Path) -> Path:
    """A JSON source, an append bronze model and a complete gold model."""
    (folder / "models" / "sources.yml").write_text(textwrap.dedent("""
        version: 2
        sources:
          - name: landing
            tables:
              - name: events
                meta:
                  stream:
                    format: json
                    path: events
                    create_path: true
                    schema: "id bigint, device string, reading double"
    """))
    (folder / "models" / "bronze_events.sql").write_text(BRONZE)
    (folder / "models" / "device_totals.sql").write_text(GOLD)
    return folder


def land(project: Path, name: str, rows: list[dict]) -> None:
    folder = project / ".lakehouse" / "landing" / "events"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows))


def events(ids, devices: int) -> list[dict]:
    return [{"id": i, "device": f"d{i % devices}", "reading": float(i)} for i in ids]


def totals(rows: list[dict]) -> list[tuple]:
    """device_totals recomputed from the events."""
    found: dict[str, tuple[int, float]] = {}
    for row in rows:
        count, total = found.get(row["device"], (0, 0.0))
        found[row["device"]] = (count + 1, total + row["reading"])
    return sorted((device, count, total) for device, (count, total) in found.items())


def table_rows(spark, project: Path, table: str, schema: str = SCHEMA) -> list[tuple]:
    path = project / ".lakehouse" / "warehouse" / f"{schema}.db" / table
    return sorted(tuple(row) for row in spark.read.format("delta").load(str(path)).collect())


def test_a_new_project_streams_with_the_installed_wheel_alone(installed, tmp_path_factory, spark):
    bin_folder, env = installed
    project = init_project(bin_folder, env, tmp_path_factory.mktemp("outside"))
    assert REPO_ROOT not in project.parents
    profile = (project.parent / "profiles" / "profiles.yml").read_text()
    assert "type: spark_streaming" in profile and "lakehouse_dir: .lakehouse" in profile

    said = run([str(bin_folder / "dbt-spark-streaming"), "init"], cwd=project, env=env)
    assert "3 macro file(s) written" in said
    assert sorted(p.name for p in (project / "macros" / "spark_streaming").iterdir()) == [
        "ref.sql", "source.sql", "unit_test_fixture.sql"]

    first = events(range(30), devices=3)
    second = events(range(30, 50), devices=4)
    dbt = [str(bin_folder / "dbt"), "run", "--profiles-dir", str(project.parent / "profiles")]
    land(project, "part-1.json", first)
    run(dbt, cwd=project, env=env)
    land(project, "part-2.json", second)
    run(dbt, cwd=project, env=env)

    # The first session fetched Delta's and the Kafka connector's jars into the (test's) user cache.
    cache = Path(env["XDG_CACHE_HOME"]) / "dbt-spark-streaming" / "jars"
    assert any(cache.rglob("delta-spark_*.jar")) and any(cache.rglob("spark-sql-kafka-0-10_*.jar"))
    # Every event exactly once in bronze, and gold as a recompute of it.
    landed = first + second
    assert table_rows(spark, project, "bronze_events") == sorted(
        (row["id"], row["device"], row["reading"]) for row in landed)
    assert table_rows(spark, project, "device_totals") == totals(landed)


def test_the_ci_recipe_lints_then_builds_what_changed_in_its_own_schema(installed, tmp_path_factory, spark):
    bin_folder, env = installed
    project = new_project(tmp_path_factory.mktemp("outside") / PROJECT)
    landed = events(range(12), devices=3)
    land(project, "part-1.json", landed)
    said = run([str(bin_folder / "dbt-spark-streaming"), "init"], cwd=project, env=env)
    assert ".sqlfluff written" in said and "dialect = sparksql" in (project / ".sqlfluff").read_text()
    run([str(bin_folder / "dbt"), "run", "--target", "prod", "--profiles-dir", str(project)], cwd=project, env=env)
    state = project / "prod-state"
    state.mkdir()
    shutil.copy(project / "target" / "manifest.json", state)
    production = {str(path): path.read_bytes() for path in (project / ".lakehouse").rglob("*")
                  if path.is_file() and f"{SCHEMA}" in str(path.relative_to(project / ".lakehouse"))}

    # the pull request changes gold
    (project / "models" / "device_totals.sql").write_text(GOLD.replace(
        "    sum(reading) as total\n", "    sum(reading) as total,\n    max(reading) as highest\n"))
    ci_env = {**env, "DBT_PROFILES_DIR": str(project), "PROD_STATE": str(state)}
    said = run(["bash", str(RECIPE / "ci.sh")], cwd=project, env=ci_env)

    assert "jars in" in said and "streaming lint: 2 streaming models, 0 problems" in said
    assert table_rows(spark, project, "device_totals", schema="ci") == [
        (device, count, total, max(row["reading"] for row in landed if row["device"] == device))
        for device, count, total in totals(landed)]
    assert {str(path): path.read_bytes() for path in map(Path, production)} == production

    # a model that cannot stream stops the recipe before anything is built
    (project / "models" / "latest.sql").write_text(
        "{{ config(materialized='streaming_table') }}\n\nselect id\nfrom {{ ref('bronze_events') }}\norder by id\n")
    failed = subprocess.run(["bash", str(RECIPE / "ci.sh")], cwd=project, env=ci_env, capture_output=True,
                            text=True, timeout=900)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "models/latest.sql:5:1:" in failed.stdout and "ORDER BY" in failed.stdout
    assert "dbt build" not in failed.stdout and not (project / ".lakehouse" / "warehouse" / "ci.db" / "latest").exists()


def test_without_maven_central_the_first_run_says_where_the_jars_go(installed, tmp_path_factory):
    bin_folder, env = installed
    project = new_project(tmp_path_factory.mktemp("offline") / PROJECT)
    run([str(bin_folder / "dbt-spark-streaming"), "init"], cwd=project, env=env)
    offline = {**env, "XDG_CACHE_HOME": str(project / "empty-cache"),
               "SPARK_STREAMING_MAVEN_REPOSITORY": "http://127.0.0.1:9/maven2/"}

    failed = subprocess.run([str(bin_folder / "dbt"), "run", "--profiles-dir", str(project)], cwd=project,
                            env=offline, capture_output=True, text=True, timeout=600)

    assert failed.returncode != 0
    said = " ".join(failed.stdout.split())
    assert "Could not fetch Delta Lake's and the Kafka connector's jars" in said
    assert "SPARK_STREAMING_MAVEN_REPOSITORY" in said and "SPARK_EXTRA_JARS_DIR" in said
    assert not any((project / "empty-cache").rglob("*.jar"))


def wait_until(what: str, check, deadline_seconds: float, log: Path, interval: float = 1.0):
    """`check()`'s first truthy answer, polled until the deadline; the serve log on failure."""
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(interval)
    pytest.fail(f"no {what} after {deadline_seconds:g} s; the serve log:\n{log.read_text()[-6000:]}")


def test_serve_status_and_stop_from_the_project_folder_without_the_hook(installed, tmp_path_factory, spark):
    bin_folder, env = installed
    project = init_project(bin_folder, env, tmp_path_factory.mktemp("served"))
    assert "on-run-end" not in (project / "dbt_project.yml").read_text()  # served by the command alone
    command = str(bin_folder / "dbt-spark-streaming")
    profiles = ["--profiles-dir", str(project.parent / "profiles")]
    run([command, "init"], cwd=project, env=env)
    first = events(range(24), devices=3)
    second = events(range(24, 40), devices=4)
    land(project, "part-1.json", first)

    log = project.parent / "serve.log"
    with log.open("w") as output:
        serving = subprocess.Popen([command, "serve", *profiles], cwd=project, env=env, stdout=output,
                                   stderr=subprocess.STDOUT, text=True)
    try:
        def serving_both_models():
            status = subprocess.run([command, "status", *profiles], cwd=project, env=env, capture_output=True,
                                    text=True, timeout=60)
            assert serving.poll() is None, f"serve exited {serving.returncode}:\n{log.read_text()[-6000:]}"
            said = status.stdout
            return status.returncode == 0 and "bronze_events" in said and "device_totals" in said and said

        said = wait_until("`status` serving both models", serving_both_models, 600, log)
        assert said.startswith("service: serving"), said
        land(project, "part-2.json", second)
        landed = first + second
        wait_until("gold with the second file's rows",
                   lambda: table_rows(spark, project, "device_totals") == totals(landed), 300, log)

        stopped = subprocess.run([command, "stop", *profiles], cwd=project, env=env, capture_output=True,
                                 text=True, timeout=300)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr + log.read_text()[-6000:]
        assert serving.wait(timeout=120) == 0, log.read_text()[-6000:]
    finally:
        if serving.poll() is None:
            serving.kill()
            serving.wait()

    said = log.read_text()
    assert "does not serve its queries" not in said and "Serving " in said, said[-6000:]
    # every event exactly once in bronze; gold its recompute
    assert table_rows(spark, project, "bronze_events") == sorted(
        (row["id"], row["device"], row["reading"]) for row in landed)
    assert table_rows(spark, project, "device_totals") == totals(landed)
    status = subprocess.run([command, "status", *profiles], cwd=project, env=env, capture_output=True, text=True,
                            timeout=60)
    assert status.returncode == 1 and status.stdout.startswith("service: stopped"), status.stdout
