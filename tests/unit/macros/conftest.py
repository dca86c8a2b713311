"""tests/unit/macros: the macros of the adapter plugin (adapter/dbt/include/spark_streaming/macros)
and of the root project (macros/) rendered with dbt's Jinja and a context of recording fakes
(macro_rendering.py). No JVM, no Spark session, no dbt run."""

from __future__ import annotations

import pytest

from macro_rendering import Macro, MacroRenderer, parse_macros


@pytest.fixture(scope="session")
def macros() -> dict[str, Macro]:
    return parse_macros()


@pytest.fixture
def renderer(macros, tmp_path, monkeypatch) -> MacroRenderer:
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))  # where the config reader puts checkpoints
    return MacroRenderer(macros)
