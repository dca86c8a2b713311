"""`make lint`'s import rules (python_runners/ops/import_rules.py, import_graph.py, rooms.py), on
small trees built here: circles, the order of the rooms, py4j handles outside runtime/jvm/ and
runtime/delta/, the runtime's root, the adapter."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from python_runners.ops import import_rules
from python_runners.ops.import_graph import circles, read_modules
from python_runners.ops.import_rules import ROOTS, check

CLEAN = {
    "python_runners/__init__.py": "",
    "adapter/dbt_spark_streaming/__init__.py": """
        from importlib import import_module
        _FACE = {"run_it": "run.streaming_run"}
    """,
    "adapter/dbt_spark_streaming/errors.py": "class StreamingError(Exception): ...",
    "adapter/dbt_spark_streaming/session.py": """
        def session_key(spark):
            return id(spark._jsparkSession)
    """,
    "adapter/dbt_spark_streaming/config/__init__.py": '"""Settings, without Spark.\n\nMay import: nothing"""',
    "adapter/dbt_spark_streaming/config/model.py": "from dbt_spark_streaming.errors import StreamingError",
    "adapter/dbt_spark_streaming/jvm/__init__.py": '"""The JVM\'s handles.\n\nMay import: config"""',
    "adapter/dbt_spark_streaming/jvm/plans.py": """
        def analyzed(frame):
            return frame._jdf.queryExecution().analyzed()
    """,
    "adapter/dbt_spark_streaming/writes/__init__.py": '"""Writes.\n\nMay import: jvm, config"""',
    "adapter/dbt_spark_streaming/writes/streaming.py": """
        from dbt_spark_streaming.config import model
        from dbt_spark_streaming.jvm import plans
    """,
    "adapter/dbt_spark_streaming/run/__init__.py": '"""One run.\n\nMay import: writes, jvm, config"""',
    "adapter/dbt_spark_streaming/run/streaming_run.py": """
        from dbt_spark_streaming.writes.streaming import plans
        from dbt_spark_streaming.session import session_key

        def later():
            from dbt_spark_streaming import errors
    """,
    "python_runners/ops/__init__.py": "",
    "python_runners/ops/report.py": "from dbt_spark_streaming.run import streaming_run",
    "adapter/dbt/adapters/spark_streaming/impl.py": "import dbt_spark_streaming as runtime\nfrom . import connections",
    "adapter/dbt/adapters/spark_streaming/connections.py": "import dbt_spark_streaming as runtime",
}


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).strip() + "\n")
    return root


def said(root: Path) -> str:
    return "\n".join(check(root))


def test_a_clean_tree_keeps_every_rule(tmp_path):
    assert check(tree(tmp_path, CLEAN)) == []


def test_the_command_says_nothing_and_exits_0_on_a_clean_tree(tmp_path, capsys):
    assert import_rules.main([str(tree(tmp_path, CLEAN))]) == 0
    assert capsys.readouterr().out == ""


def test_a_circle_is_said_as_a_chain_with_where_each_import_is(tmp_path, capsys):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/config/model.py": "from dbt_spark_streaming.config import cdc",
                    "adapter/dbt_spark_streaming/config/cdc.py": "import dbt_spark_streaming.config.model"})

    assert import_rules.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert ("import circle: dbt_spark_streaming.config.cdc -> dbt_spark_streaming.config.model"
            " -> dbt_spark_streaming.config.cdc") in out
    assert "adapter/dbt_spark_streaming/config/model.py:1: `from dbt_spark_streaming.config import cdc`" in out
    assert "make lint: import rules broken" in out


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/errors.py": """
        class StreamingError(Exception): ...

        def explain():
            from dbt_spark_streaming.config.model import StreamingError as again
            return again
    """})

    out = said(tmp_path)
    assert ("import circle: dbt_spark_streaming.config.model -> dbt_spark_streaming.errors"
            " -> dbt_spark_streaming.config.model") in out
    assert "(inside a function)" in out


def test_a_relative_import_and_a_type_checking_import_count(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/writes/streaming.py": """
        from typing import TYPE_CHECKING
        from ..jvm import plans
        if TYPE_CHECKING:
            from dbt_spark_streaming.run.streaming_run import later
    """})

    out = said(tmp_path)
    assert "dbt_spark_streaming.run.streaming_run -> dbt_spark_streaming.writes.streaming" in out
    assert "(type checking only)" in out
    modules, _ = read_modules(tmp_path, ROOTS)
    imported = {item.target for item in modules["dbt_spark_streaming.writes.streaming"].imports}
    assert "dbt_spark_streaming.jvm.plans" in imported


def test_every_circle_once_however_many_modules_it_passes(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/jvm/plans.py": "from dbt_spark_streaming.run import streaming_run"})
    modules, _ = read_modules(tmp_path, ROOTS)

    assert circles(modules, import_rules.PACKAGES) == [[
        "dbt_spark_streaming.jvm.plans", "dbt_spark_streaming.run.streaming_run",
        "dbt_spark_streaming.writes.streaming", "dbt_spark_streaming.jvm.plans",
    ]]


def test_an_upward_import_is_said_with_the_rooms_line_that_forbids_it(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/writes/streaming.py": """
        from dbt_spark_streaming.config import model

        def stop():
            from dbt_spark_streaming.run.interruption import stop_streams
    """, "adapter/dbt_spark_streaming/run/interruption.py": "def stop_streams(): ..."})

    out = said(tmp_path)
    assert ("runtime/writes/ may import only jvm, config (`May import:` in "
            "adapter/dbt_spark_streaming/writes/__init__.py)") in out
    assert ("adapter/dbt_spark_streaming/writes/streaming.py:4: "
            "`from dbt_spark_streaming.run.interruption import stop_streams` (inside a function): runtime/run/") in out
    assert "rooms in a loop: run -> writes -> run" in out


def test_a_room_without_a_may_import_line_is_said(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/sources/__init__.py": '"""What models read."""',
                    "adapter/dbt_spark_streaming/sources/views.py": "from dbt_spark_streaming.config import model"})

    out = said(tmp_path)
    assert out.startswith("adapter/dbt_spark_streaming/sources/__init__.py: a room says in its docstring which "
                          "rooms it may import, in a line `May import: a, b`")
    assert out.count("\n") == 0  # its imports are not checked against a line it does not have


def test_a_may_import_line_that_names_no_room_is_said(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/jvm/__init__.py": '"""The JVM.\n\nMay import: config, hadoop"""'})

    assert ("adapter/dbt_spark_streaming/jvm/__init__.py: `May import:` names hadoop, not rooms "
            "(the rooms: config, jvm, run, writes)") in said(tmp_path)


def test_may_import_lines_that_make_a_loop_are_said(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/jvm/__init__.py": '"""The JVM.\n\nMay import: run, config"""'})

    assert "the rooms' order has a loop: jvm -> run -> jvm" in said(tmp_path)


def test_a_move_that_makes_a_loop_of_rooms_is_said(tmp_path):
    # Issue 49's loop: lifecycle -> writes -> sources -> lifecycle, while a checkpoint's log reader
    # lived in lifecycle/. It lives in jvm/, and moving it back makes the loop again.
    lifecycle_tree = {
        **CLEAN,
        "adapter/dbt_spark_streaming/lifecycle/__init__.py":
            '"""Between runs.\n\nMay import: writes, sources, jvm, config"""',
        "adapter/dbt_spark_streaming/lifecycle/redeploy.py": "from dbt_spark_streaming.writes import streaming",
        "adapter/dbt_spark_streaming/sources/__init__.py": '"""What models read.\n\nMay import: jvm, config"""',
        "adapter/dbt_spark_streaming/sources/initial_snapshot.py":
            "from dbt_spark_streaming.jvm.checkpoint_log import OFFSETS",
        "adapter/dbt_spark_streaming/jvm/checkpoint_log.py": 'OFFSETS = "offsets"',
        "adapter/dbt_spark_streaming/writes/__init__.py": '"""Writes.\n\nMay import: sources, jvm, config"""',
        "adapter/dbt_spark_streaming/writes/copy_into.py": "from dbt_spark_streaming.sources import initial_snapshot",
    }
    tree(tmp_path, lifecycle_tree)
    assert check(tmp_path) == []

    runtime = tmp_path / "adapter/dbt_spark_streaming"
    (runtime / "jvm/checkpoint_log.py").rename(runtime / "lifecycle/checkpoint_log.py")
    snapshot = runtime / "sources/initial_snapshot.py"
    snapshot.write_text(snapshot.read_text().replace(".jvm.", ".lifecycle."))

    out = said(tmp_path)
    assert "rooms in a loop: lifecycle -> writes -> sources -> lifecycle" in out
    assert ("adapter/dbt_spark_streaming/sources/initial_snapshot.py:1: "
            "`from dbt_spark_streaming.lifecycle.checkpoint_log import OFFSETS`: runtime/lifecycle/") in out


def test_a_sub_room_is_part_of_its_room_and_needs_no_line_of_its_own(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/writes/cdc/__init__.py": '"""cdc writes."""',
                    "adapter/dbt_spark_streaming/writes/cdc/scd2.py": "from dbt_spark_streaming.jvm import plans",
                    "adapter/dbt_spark_streaming/jvm/tables.py": "from dbt_spark_streaming.writes.cdc import scd2"})

    out = said(tmp_path)
    assert "writes/cdc/__init__.py" not in out
    assert ("adapter/dbt_spark_streaming/jvm/tables.py:1: `from dbt_spark_streaming.writes.cdc import scd2`: "
            "runtime/writes/") in out


def test_the_package_commands_room_may_import_every_room_and_no_room_imports_it(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/commands/__init__.py":
                        '"""The package command.\n\nMay import: every room"""',
                    "adapter/dbt_spark_streaming/commands/status.py": """
                        from dbt_spark_streaming.run import streaming_run
                        from dbt_spark_streaming.jvm import plans
                    """})
    assert check(tmp_path) == []

    tree(tmp_path, {"adapter/dbt_spark_streaming/run/streaming_run.py": "from dbt_spark_streaming.commands import status"})
    out = said(tmp_path)
    assert "runtime/run/ may import only writes, jvm, config" in out
    assert "rooms in a loop: commands -> run -> commands" in out


def test_config_imports_no_room_that_needs_spark(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "adapter/dbt_spark_streaming/config/model.py": "from dbt_spark_streaming.jvm import plans"})

    out = said(tmp_path)
    assert "runtime/config/ imports nothing from" in out and "config is read without Spark" in out
    assert "adapter/dbt_spark_streaming/config/model.py:1: `from dbt_spark_streaming.jvm import plans`" in out


def test_a_py4j_handle_outside_jvm_and_delta_is_found_wherever_it_is_used(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/writes/merge.py": """
        def release(frame):
            jvm = frame.sparkSession._jvm
            return frame._jdf.queryExecution(), jvm
    """})

    out = said(tmp_path)
    assert ("only runtime/jvm/, runtime/delta/, runtime/session.py and runtime/driver/ use _jvm, "
            "_jsparkSession, _jdf, _jsc") in out
    assert "adapter/dbt_spark_streaming/writes/merge.py:2: _jvm" in out
    assert "adapter/dbt_spark_streaming/writes/merge.py:3: _jdf" in out
    assert "jvm/plans.py" not in out and "session.py:" not in out


def test_the_runtime_imports_none_of_the_tools_around_it(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/errors.py": "from python_runners import ops",
                    "adapter/dbt_spark_streaming/jvm/plans.py": "import python_runners.testing.landing",
                    "python_runners/testing/__init__.py": "", "python_runners/testing/landing.py": ""})

    out = said(tmp_path)
    assert "runtime/ imports nothing from python_runners/ (the runtime is installed without this repository" in out
    assert "adapter/dbt_spark_streaming/errors.py:1: `from python_runners import ops`" in out
    assert "adapter/dbt_spark_streaming/jvm/plans.py:1: `import python_runners.testing.landing`" in out


def test_the_adapter_imports_only_the_runtimes_face(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt/adapters/spark_streaming/connections.py": """
        import dbt_spark_streaming as runtime
        from dbt_spark_streaming import StreamingRun
        from dbt_spark_streaming.run.streaming_run import later
        from python_runners.ops import report
    """})

    out = said(tmp_path)
    assert ("adapter/dbt/adapters/spark_streaming/ imports dbt_spark_streaming only as "
            "`import dbt_spark_streaming as runtime`") in out
    assert "connections.py:1:" not in out
    assert "spark_streaming/connections.py:2: `from dbt_spark_streaming import StreamingRun`" in out
    assert "connections.py:3: `from dbt_spark_streaming.run.streaming_run import later`" in out
    assert "imports nothing from python_runners/ (the adapter is installed without this repository" in out
    assert "connections.py:4: `from python_runners.ops import report`" in out


def test_a_module_added_to_the_runtimes_root_is_sent_to_a_room(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/helpers.py": ""})

    out = said(tmp_path)
    assert "adapter/dbt_spark_streaming/helpers.py: the runtime's root holds only __init__, session, errors" in out
    assert "put helpers.py in a room: config/ (Settings, without Spark); jvm/ (The JVM's handles)" in out
    assert "writes/ (Writes)" in out


def test_a_file_that_does_not_parse_is_said(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt_spark_streaming/config/broken.py": "def ("})

    assert "adapter/dbt_spark_streaming/config/broken.py: does not parse" in said(tmp_path)


def test_without_an_adapter_folder_only_python_runners_is_read(tmp_path):
    tree(tmp_path, {name: text for name, text in CLEAN.items() if not name.startswith("adapter/")})

    assert check(tmp_path) == []
