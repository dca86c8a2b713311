"""`make lint`'s rule that each plugin method makes at most one runtime call
(python_runners/ops/plugin_calls.py): the plugin as it is, and planted compositions it refuses."""

from __future__ import annotations

import textwrap

from python_runners import REPO_ROOT
from python_runners.ops import plugin_calls


def found(source: str) -> list[str]:
    return list(plugin_calls.violations(textwrap.dedent(source), "impl.py"))


def test_the_plugin_makes_one_runtime_call_per_method():
    assert plugin_calls.check(REPO_ROOT) == []


def test_a_method_composing_runtime_steps_is_named_with_its_calls():
    said = found("""
        class Adapter:
            def reset(self, table):
                runtime.drop_table_if_exists(self._spark(), table)
                runtime.delete_checkpoint(self._spark(), runtime.checkpoint_of(table))
    """)

    assert said == ["impl.py:3: reset makes 3 runtime calls: `runtime.drop_table_if_exists` (line 4), "
                    "`runtime.delete_checkpoint` (line 5), `runtime.checkpoint_of` (line 5)"]


def test_calls_on_the_invocation_the_plugin_holds_count_too():
    said = found("""
        def finish(self):
            self.connections.invocation.run.finish(self._spark())
            runtime.say_unserved(self._spark(), self.connections.invocation.run)
    """)

    assert len(said) == 1 and "finish makes 2 runtime calls" in said[0]


def test_one_call_each_in_a_function_and_the_function_inside_it_is_allowed():
    assert found("""
        def outer(self):
            def inner():
                return runtime.config_error_of(node)
            return runtime.materialize_streaming_model(self._spark(), inner)
    """) == []
