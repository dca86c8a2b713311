"""`make lint`: every method of the dbt plugin makes at most one call into the runtime.

    python -m python_runners.ops.plugin_calls [REPO]

The plugin (adapter/dbt/adapters/spark_streaming/) translates between dbt and the runtime: what a
streaming model's run does, and in which order, is the runtime's (run/materialize.py). A call
into the runtime is a call through its face (`runtime.x(...)`, `runtime.X.y(...)`) or on the
invocation the runtime keeps for dbt (`self.connections.invocation...`). A function that makes
two composes the runtime's steps in the plugin: give the runtime one entry for it instead.
Exits 1 naming each such function, its calls and where.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator, Optional

PLUGIN = Path("adapter/dbt/adapters/spark_streaming")
RUNTIME_ALIAS = "runtime"  # `import dbt_spark_streaming as runtime`
RUNTIME_OBJECTS = ("invocation",)  # the runtime's objects the plugin holds


def runtime_calls(function: ast.AST) -> list[ast.Call]:
    """The calls into the runtime in the function's own body (nested functions are their own)."""
    return [node for node in _own_nodes(function) if isinstance(node, ast.Call) and _into_runtime(node.func)]


def violations(source: str, filename: str) -> Iterator[str]:
    for function in ast.walk(ast.parse(source, filename)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        calls = runtime_calls(function)
        if len(calls) > 1:
            said = ", ".join(f"`{ast.unparse(call.func)}` (line {call.lineno})" for call in calls)
            yield f"{filename}:{function.lineno}: {function.name} makes {len(calls)} runtime calls: {said}"


def check(repo: Path) -> list[str]:
    found = []
    for path in sorted((repo / PLUGIN).glob("*.py")):
        found += violations(path.read_text(), str(path.relative_to(repo)))
    return found


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(function):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield child
        yield from _own_nodes(child)


def _into_runtime(func: ast.AST) -> bool:
    names = []
    node: Optional[ast.AST] = func
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[-1:] == [RUNTIME_ALIAS] or any(name in RUNTIME_OBJECTS for name in names[1:])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    repo = Path(argv[0]) if argv else Path.cwd()
    found = check(repo)
    for line in found:
        print(line)
    if found:
        print("make lint: a plugin method composes runtime calls; give the runtime one entry for it "
              "(python_runners/ops/plugin_calls.py says why).")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
