"""The project's Jinja macros rendered as dbt renders them, without dbt running (tests/unit/macros).

The approach of dbt-databricks' tests/unit/macros (a Jinja environment, a context of plain Python
fakes), but with dbt's own machinery, so the macros behave as in a run:
- each file is split into its macros as dbt's macro parser does (extract_toplevel_blocks, one
  block per macro), and `{% materialization x, adapter='spark_streaming' %}` becomes the macro
  `materialization_x_spark_streaming` through dbt's MaterializationExtension;
- every macro is in the context as dbt's CallableMacroGenerator, so a macro calling another (in
  the same file or not) goes through the context, and `return(...)` hands back a Python value
  (MacroReturn) exactly as in dbt;
- dbt's own should_full_refresh and default__get_limit_sql are the real ones (global project).

The context's `adapter` records every call in one list with the other fakes (run_hooks,
store_raw_result, persist_docs, ...), so a test sees which calls a branch makes and in which
order. It only answers the methods dbt exposes to Jinja (@available on SparkStreamingAdapter), and
checks each call's arguments against the real method's signature. The methods that need no Spark
(REAL_METHODS: the config reader, the project's materialisation lists, a source's meta.stream, a
copy_into view's name) answer with the real code, so a config error is the runtime's own.
No JVM, no Spark session, no dbt run.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import jinja2
from dbt.adapters.spark_streaming.impl import SparkStreamingAdapter
from dbt.context.exceptions_jinja import wrapped_exports
from dbt.include import global_project, spark_streaming
from dbt_common.clients.jinja import CallableMacroGenerator, extract_toplevel_blocks, parse
from dbt_common.exceptions.macros import MacroReturn
from dbt_common.utils.jinja import MACRO_PREFIX

REPO = Path(__file__).resolve().parents[3]
ADAPTER_MACROS = Path(spark_streaming.PACKAGE_PATH) / "macros"
PROJECT_MACROS = REPO / "macros"
SHIPPED_PROJECT_MACROS = REPO / "adapter" / "dbt_spark_streaming" / "project_macros"
DBT_MACROS = Path(global_project.PACKAGE_PATH) / "macros"
MACRO_FILES = (
    *sorted(ADAPTER_MACROS.rglob("*.sql")),
    *sorted(PROJECT_MACROS.rglob("*.sql")),
    *sorted(SHIPPED_PROJECT_MACROS.rglob("*.sql")),
    DBT_MACROS / "materializations" / "configs.sql",  # should_full_refresh
    DBT_MACROS / "adapters" / "show.sql",  # default__get_limit_sql
)
Relation = SparkStreamingAdapter.Relation


@dataclass(frozen=True)
class Macro:
    """What dbt's CallableMacroGenerator needs of a parsed macro (dbt's Macro node)."""

    name: str
    macro_sql: str
    path: str


def parse_macros(paths=MACRO_FILES) -> dict[str, Macro]:
    """Each file's macros, one block each, named as dbt's MacroParser names them."""
    macros: dict[str, Macro] = {}
    for path in paths:
        blocks = extract_toplevel_blocks(
            path.read_text(), allowed_blocks={"macro", "materialization", "test", "data_test"}, collect_raw_data=False
        )
        for block in blocks:
            (node,) = parse(block.full_block).find_all(jinja2.nodes.Macro)
            name = node.name.removeprefix(MACRO_PREFIX)
            assert name not in macros, f"{name} in both {macros[name].path} and {path}"
            macros[name] = Macro(name, block.full_block, str(path))
    return macros


@dataclass
class Call:
    name: str
    args: tuple
    kwargs: dict
    result: Any = None


class Calls(list):
    """Every recorded call of a render, in order."""

    def names(self) -> list[str]:
        return [call.name for call in self]

    def of(self, name: str) -> list[Call]:
        return [call for call in self if call.name == name]

    def one(self, name: str) -> Call:
        found = self.of(name)
        assert len(found) == 1, f"{name} called {len(found)} times: {self.names()}"
        return found[0]


def _answer(answer: Any, args: tuple, kwargs: dict) -> Any:
    return answer(*args, **kwargs) if callable(answer) else answer


# Adapter methods that compute their answer from their arguments alone (no Spark, no connection):
# the fake answers them with the real method.
REAL_METHODS = ("streaming_model_config", "streaming_materializations", "stream_source_meta", "copy_source_view")
# Lookups of the project's fixed lists that change nothing: answered, not recorded.
UNRECORDED = {"streaming_materializations"}


def real_method(name: str) -> Callable:
    """The adapter's own method (e.g. streaming_model_config: runtime.read_model_config behind
    reported_to_dbt, so a config error is the CompilationError a run raises)."""
    method = getattr(SparkStreamingAdapter, name)
    return lambda *args, **kwargs: method(None, *args, **kwargs)


class FakeAdapter:
    """`adapter` as dbt's Jinja context has it: only SparkStreamingAdapter's @available methods,
    each call checked against the real signature, recorded (but UNRECORDED ones), and answered from
    `answers` (a value, or a function of the call's arguments; None when not given)."""

    def __init__(self, calls: Calls, answers: dict[str, Any]):
        self._calls = calls
        self._answers = answers

    def __getattr__(self, name: str) -> Callable:
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in SparkStreamingAdapter._available_:
            raise AssertionError(
                f"a macro calls adapter.{name}, which dbt does not expose to Jinja "
                "(no @available method of that name on SparkStreamingAdapter)"
            )
        signature = inspect.signature(getattr(SparkStreamingAdapter, name))

        def method(*args: Any, **kwargs: Any) -> Any:
            try:
                signature.bind(None, *args, **kwargs)
            except TypeError as error:
                raise AssertionError(
                    f"adapter.{name}{signature} called with {args} {kwargs}: {error}"
                ) from None
            call = Call(f"adapter.{name}", args, kwargs)
            if name not in UNRECORDED:
                self._calls.append(call)
            call.result = _answer(self._answers.get(name), args, kwargs)
            return call.result

        return method


def model_node(name: str = "counts", materialized: str = "streaming_table", schema: str = "gold",
               sources=(("landing", "events"),), resource_type: str = "model", **config) -> dict:
    """A node as dbt's `model` and graph have it (a dict), with what read_model_config reads."""
    return {
        "name": name, "alias": name, "schema": schema, "unique_id": f"{resource_type}.lakehouse.{name}",
        "resource_type": resource_type, "package_name": "lakehouse", "raw_code": "select 1",
        "sources": [list(source) for source in sources],
        "config": {"materialized": materialized, **config},
    }


EVENTS = {"format": "json", "path": "events", "schema": "id int, kind string"}


def source_node(source_name: str = "landing", name: str = "events", stream: dict | None = None) -> dict:
    return {
        "unique_id": f"source.lakehouse.{source_name}.{name}", "resource_type": "source",
        "source_name": source_name, "name": name, "meta": {"stream": stream} if stream else {},
    }


class Config:
    """The materialisation context's `config`: reads the model's config."""

    def __init__(self, renderer: "MacroRenderer"):
        self._renderer = renderer

    def get(self, name: str, default: Any = None, validator: Any = None) -> Any:
        return self._renderer.model["config"].get(name, default)

    def require(self, name: str, validator: Any = None) -> Any:
        return self._renderer.model["config"][name]


class MacroRenderer:
    """One render's state, as dbt's context gives it to a materialisation or a macro; change
    any attribute before calling `call` / `materialize`."""

    def __init__(self, macros: dict[str, Macro]):
        self.macros = macros
        self.calls = Calls()
        self.model = model_node()
        self.other_nodes: list[dict] = []
        self.sources = [source_node(stream=EVENTS)]
        self.sql = "select id, kind from stream(landing__events)"
        self.flags = SimpleNamespace(FULL_REFRESH=False, WHICH="run", EMPTY=False)
        self.vars: dict[str, Any] = {}
        self.execute = True
        self.selected_resources = ["model.lakehouse.counts"]
        self.target = SimpleNamespace(name="dev", schema="analytics", type="spark_streaming")
        self.pre_hooks = [SimpleNamespace(sql="select 'pre'", transaction=True, index=0)]
        self.post_hooks = [SimpleNamespace(sql="select 'post'", transaction=True, index=0)]
        self.results: list[Any] = []
        self.tables: set[str] = set()  # what load_relation finds
        self.this: Any = None  # default: the model's own relation
        self.printed: list[str] = []
        self.adapter_answers: dict[str, Any] = {
            **{name: real_method(name) for name in REAL_METHODS},
            "materialize": lambda config, *args: (
                {"message": "2 files loaded", "rows_affected": 20, "code": "COPIED"}
                if config.materialized == "copy_into"
                else {"message": "3 rows streamed", "rows_affected": 3, "code": "STREAMED"}),
            "source_view": lambda name, meta, streaming=True: f"{name.replace('.', '__')}__view",
            "quote": lambda name: f"`{name}`",
        }
        self.answers: dict[str, Any] = {
            "builtins.ref": lambda *names, **kwargs: Relation.create(schema="gold", identifier=names[-1]),
            "builtins.source": lambda source, table: Relation.create(schema=source, identifier=table),
            "get_expected_sql": "select 1 as id",
            "get_unit_test_sql": lambda actual, expected, columns: f"-- compare {actual} with {expected}",
            "dbt.get_fixture_sql": "-- dbt's fixture",
        }

    @property
    def graph(self) -> dict:
        return {
            "nodes": {
                node["unique_id"]: node for node in (self.model, *self.other_nodes)
                if isinstance(node, dict) and "unique_id" in node
            },
            "sources": {source["unique_id"]: source for source in self.sources},
        }

    def recorder(self, name: str, answer: Any = "") -> Callable:
        def record(*args: Any, **kwargs: Any) -> Any:
            call = Call(name, args, kwargs)
            self.calls.append(call)
            call.result = _answer(self.answers.get(name, answer), args, kwargs)
            return call.result

        return record

    def _statement(self, name: Any = None, fetch_result: bool = False, auto_begin: bool = True,
                   language: str = "sql", caller: Any = None) -> str:
        self.calls.append(Call("statement", (name,), {"fetch_result": fetch_result, "sql": caller().strip()}))
        return ""

    def _load_relation(self, relation: Any) -> Any:
        self.calls.append(Call("load_relation", (relation.render(),), {}))
        return relation if relation.render() in self.tables else None

    def _return(self, value: Any) -> None:
        raise MacroReturn(value)

    def own_relation(self) -> Any:
        if not isinstance(self.model, dict):
            return None
        return Relation.create(schema=self.model.get("schema"), identifier=self.model.get("alias"))

    def context(self) -> dict[str, Any]:
        context: dict[str, Any] = {
            "model": self.model,
            "graph": self.graph,
            "sql": self.sql,
            "this": self.this if self.this is not None else self.own_relation(),
            "config": Config(self),
            "flags": self.flags,
            "var": lambda name, default=None: self.vars.get(name, default),
            "execute": self.execute,
            "selected_resources": self.selected_resources,
            "target": self.target,
            "results": self.results,
            "pre_hooks": self.pre_hooks,
            "post_hooks": self.post_hooks,
            "adapter": FakeAdapter(self.calls, self.adapter_answers),
            "api": SimpleNamespace(Relation=Relation),
            "builtins": {"ref": self.recorder("builtins.ref"), "source": self.recorder("builtins.source")},
            "dbt": SimpleNamespace(get_fixture_sql=self.recorder("dbt.get_fixture_sql")),
            "exceptions": wrapped_exports(None),
            "return": self._return,
            "print": self.printed.append,
            "load_relation": self._load_relation,
            "statement": self._statement,
            "run_hooks": self.recorder("run_hooks"),
            "store_raw_result": self.recorder("store_raw_result"),
            "persist_docs": self.recorder("persist_docs"),
            "get_expected_sql": self.recorder("get_expected_sql"),
            "get_unit_test_sql": self.recorder("get_unit_test_sql"),
            "safe_cast": lambda field, type: f"cast({field} as {type})",
            "format_row": lambda row, types: {
                name: f"cast('{value}' as {types[name]})" for name, value in row.items()
            },
        }
        for name, macro in self.macros.items():
            context[name] = CallableMacroGenerator(macro, context)
        return context

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The macro's return() value, or the text it renders."""
        return self.context()[name](*args, **kwargs)

    def materialize(self, materialization: str | None = None) -> Any:
        """The materialisation's macro (default: the model's) called as dbt calls it."""
        materialization = materialization or self.model["config"]["materialized"]
        return self.call(f"materialization_{materialization}_spark_streaming")

    def settings(self) -> Any:
        """The ModelConfig the materialisation read (what streaming_model_config answered)."""
        return self.calls.one("adapter.streaming_model_config").result
