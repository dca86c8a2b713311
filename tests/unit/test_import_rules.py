"""`make lint`'s import rules (python_runners/ops/import_rules.py, import_graph.py), on small
trees built here: circles, room rules, py4j handles outside runtime/delta/, the runtime's root,
the adapter."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

from python_runners.ops import import_rules
from python_runners.ops.import_graph import circles, read_modules
from python_runners.ops.import_rules import ROOTS, check

CLEAN = {
    "python_runners/__init__.py": "",
    "python_runners/runtime/__init__.py": """
        from importlib import import_module
        _FACE = {"run_it": "run.streaming_run"}
    """,
    "python_runners/runtime/errors.py": "class StreamingError(Exception): ...",
    "python_runners/runtime/session.py": """
        def session_key(spark):
            return id(spark._jsparkSession)
    """,
    "python_runners/runtime/config/__init__.py": "",
    "python_runners/runtime/config/model.py": "from python_runners.runtime.errors import StreamingError",
    "python_runners/runtime/delta/__init__.py": "",
    "python_runners/runtime/delta/plans.py": """
        def analyzed(frame):
            return frame._jdf.queryExecution().analyzed()
    """,
    "python_runners/runtime/writes/__init__.py": "",
    "python_runners/runtime/writes/streaming.py": """
        from python_runners.runtime.config import model
        from python_runners.runtime.delta import plans
    """,
    "python_runners/runtime/run/__init__.py": "",
    "python_runners/runtime/run/streaming_run.py": """
        from python_runners.runtime.writes.streaming import plans
        from python_runners.runtime.session import session_key

        def later():
            from python_runners.runtime import errors
    """,
    "python_runners/ops/__init__.py": "",
    "python_runners/ops/report.py": "from python_runners.runtime.run import streaming_run",
    "adapter/dbt/adapters/streaming/impl.py": "from python_runners import runtime\nfrom . import connections",
    "adapter/dbt/adapters/streaming/connections.py": "from python_runners import runtime",
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
                    "python_runners/runtime/config/model.py": "from python_runners.runtime.config import cdc",
                    "python_runners/runtime/config/cdc.py": "import python_runners.runtime.config.model"})

    assert import_rules.main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert ("import circle: python_runners.runtime.config.cdc -> python_runners.runtime.config.model"
            " -> python_runners.runtime.config.cdc") in out
    assert "python_runners/runtime/config/model.py:1: `from python_runners.runtime.config import cdc`" in out
    assert "make lint: import rules broken" in out


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/errors.py": """
        class StreamingError(Exception): ...

        def explain():
            from python_runners.runtime.config.model import StreamingError as again
            return again
    """})

    out = said(tmp_path)
    assert ("import circle: python_runners.runtime.config.model -> python_runners.runtime.errors"
            " -> python_runners.runtime.config.model") in out
    assert "(inside a function)" in out


def test_a_relative_import_and_a_type_checking_import_count(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/writes/streaming.py": """
        from typing import TYPE_CHECKING
        from ..delta import plans
        if TYPE_CHECKING:
            from python_runners.runtime.run.streaming_run import later
    """})

    out = said(tmp_path)
    assert "python_runners.runtime.run.streaming_run -> python_runners.runtime.writes.streaming" in out
    assert "(type checking only)" in out
    modules, _ = read_modules(tmp_path, ROOTS)
    imported = {item.target for item in modules["python_runners.runtime.writes.streaming"].imports}
    assert "python_runners.runtime.delta.plans" in imported


def test_every_circle_once_however_many_modules_it_passes(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "python_runners/runtime/delta/plans.py": "from python_runners.runtime.run import streaming_run"})
    modules, _ = read_modules(tmp_path, ROOTS)

    assert circles(modules) == [[
        "python_runners.runtime.delta.plans", "python_runners.runtime.run.streaming_run",
        "python_runners.runtime.writes.streaming", "python_runners.runtime.delta.plans",
    ]]


def test_a_room_that_imports_a_room_it_must_not_is_told_why(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/writes/streaming.py": """
        from python_runners.runtime.config import model

        def stop():
            from python_runners.runtime.run.interruption import stop_streams
    """, "python_runners/runtime/run/interruption.py": "def stop_streams(): ..."})

    out = said(tmp_path)
    assert "runtime/writes/ imports nothing from runtime/run/, runtime/lifecycle/ (writes start" in out
    assert ("python_runners/runtime/writes/streaming.py:4: "
            "`from python_runners.runtime.run.interruption import stop_streams` (inside a function)") in out


def test_config_imports_no_room_that_needs_spark(tmp_path):
    tree(tmp_path, {**CLEAN,
                    "python_runners/runtime/config/model.py": "from python_runners.runtime.delta import plans"})

    out = said(tmp_path)
    assert "runtime/config/ imports nothing from" in out and "config is read without Spark" in out
    assert "python_runners/runtime/config/model.py:1: `from python_runners.runtime.delta import plans`" in out


def test_a_py4j_handle_outside_delta_is_found_wherever_it_is_used(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/writes/merge.py": """
        def release(frame):
            jvm = frame.sparkSession._jvm
            return frame._jdf.queryExecution(), jvm
    """})

    out = said(tmp_path)
    assert "only runtime/delta/ and runtime/session.py use _jvm, _jsparkSession, _jdf, _jsc" in out
    assert "python_runners/runtime/writes/merge.py:2: _jvm" in out
    assert "python_runners/runtime/writes/merge.py:3: _jdf" in out
    assert "delta/plans.py" not in out and "session.py:" not in out


def test_the_runtime_imports_none_of_the_tools_around_it(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/errors.py": "from python_runners import ops",
                    "python_runners/runtime/delta/plans.py": "import python_runners.testing.landing",
                    "python_runners/testing/__init__.py": "", "python_runners/testing/landing.py": ""})

    out = said(tmp_path)
    assert "runtime/ imports nothing from ops/, infra/, demo/, testing/" in out
    assert "python_runners/runtime/errors.py:1: `from python_runners import ops`" in out
    assert "python_runners/runtime/delta/plans.py:1: `import python_runners.testing.landing`" in out


def test_the_adapter_imports_only_the_runtimes_face(tmp_path):
    tree(tmp_path, {**CLEAN, "adapter/dbt/adapters/streaming/connections.py": """
        from python_runners import runtime
        from python_runners.runtime import StreamingRun
        from python_runners.runtime.run.streaming_run import later
    """})

    out = said(tmp_path)
    assert "adapter/ imports python_runners only as `from python_runners import runtime`" in out
    assert "connections.py:1:" not in out
    assert "streaming/connections.py:2: `from python_runners.runtime import StreamingRun`" in out
    assert "connections.py:3: `from python_runners.runtime.run.streaming_run import later`" in out


def test_a_module_added_to_the_runtimes_root_is_sent_to_a_room(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/helpers.py": ""})

    out = said(tmp_path)
    assert "python_runners/runtime/helpers.py: the runtime's root holds only __init__, session, errors" in out
    assert "put helpers.py in a room: config/" in out and "writes/" in out


def test_a_file_that_does_not_parse_is_said(tmp_path):
    tree(tmp_path, {**CLEAN, "python_runners/runtime/config/broken.py": "def ("})

    assert "python_runners/runtime/config/broken.py: does not parse" in said(tmp_path)


def test_without_an_adapter_folder_only_python_runners_is_read(tmp_path):
    tree(tmp_path, {name: text for name, text in CLEAN.items() if not name.startswith("adapter/")})

    assert check(tmp_path) == []
