"""The imports of a tree of Python modules, read with `ast` without running any: every import
(at the top, inside functions, under `if TYPE_CHECKING:`) as the module it imports, the
attributes each module uses, and the import circles (of modules, or of any graph: rooms.py's
order). `make lint`'s rules (import_rules.py) are checked on it.

A module is named by its path from the repository (adapter/dbt_spark_streaming/session.py is
dbt_spark_streaming.session). `from a import b`, where a.b is a module, imports a.b.
"""

from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence


@dataclass(frozen=True)
class Import:
    line: int
    statement: str  # as written, one name: `from a.b import c`, `import a.b as x`
    target: str  # the module imported: the longest known one the statement names
    where: str = ""  # "inside a function", "type checking only", or ""


@dataclass
class Module:
    name: str  # dotted, as imported: dbt_spark_streaming.session, python_runners.ops.lint
    path: Path  # relative to the repository
    is_package: bool
    imports: list[Import] = field(default_factory=list)
    handles: list[tuple[int, str]] = field(default_factory=list)  # (line, attribute)


def read_modules(repo: Path, roots: Sequence[str]) -> tuple[dict[str, Module], list[str]]:
    """Every module under the roots, with its imports and py4j handle uses; and the files that
    do not parse."""
    modules: dict[str, Module] = {}
    trees: dict[str, ast.AST] = {}
    broken = []
    for root in roots:
        # A root that is a package (python_runners/) is named from the repository; one that only
        # holds packages (adapter/) from itself, as Python imports them once it is installed.
        base = repo if (repo / root / "__init__.py").exists() else repo / root
        for path in sorted((repo / root).rglob("*.py")):
            relative = path.relative_to(repo)
            parts = list(path.relative_to(base).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            try:
                trees[name] = ast.parse(path.read_text(encoding="utf-8"), filename=str(relative))
            except (SyntaxError, UnicodeDecodeError) as error:
                broken.append(f"{relative}: does not parse ({error})")
                continue
            modules[name] = Module(name, relative, is_package)
    for name, tree in trees.items():
        _Reader(modules[name], set(modules)).visit(tree)
    return modules, broken


class _Reader(ast.NodeVisitor):
    def __init__(self, module: Module, known: set[str]) -> None:
        self.module, self.known, self.context = module, known, []

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self._inside("inside a function", node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            self.visit(test)
            self.context.append("type checking only")
            for child in node.body:
                self.visit(child)
            self.context.pop()
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def _inside(self, where: str, node: ast.AST) -> None:
        self.context.append(where)
        self.generic_visit(node)
        self.context.pop()

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            written = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
            self._add(node, written, self._known_prefix(alias.name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module, node.level)
        written_base = "." * node.level + (node.module or "")
        names_by_target: dict[str, list[str]] = {}
        for alias in node.names:
            submodule = f"{base}.{alias.name}" if base else alias.name
            target = submodule if submodule in self.known else self._known_prefix(base)
            names_by_target.setdefault(target, []).append(
                alias.name + (f" as {alias.asname}" if alias.asname else "")
            )
        for target, names in names_by_target.items():
            self._add(node, f"from {written_base} import {', '.join(names)}", target)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.module.handles.append((node.lineno, node.attr))
        self.generic_visit(node)

    def _add(self, node: ast.stmt, written: str, target: str) -> None:
        where = self.context[-1] if self.context else ""
        self.module.imports.append(Import(node.lineno, written, target, where))

    def _absolute(self, name: Optional[str], level: int) -> str:
        if not level:
            return name or ""
        package = self.module.name.split(".")
        if not self.module.is_package:
            package = package[:-1]
        package = package[: len(package) - (level - 1)] if level > 1 else package
        return ".".join([*package, *([name] if name else [])])

    def _known_prefix(self, name: str) -> str:
        """The longest module the dotted name starts with, or the name itself (not ours)."""
        parts = name.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in self.known:
                return ".".join(parts[:end])
        return name


def within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def circles(modules: dict[str, Module], packages: Sequence[str] = ("python_runners",)) -> list[list[str]]:
    """The import circles among the modules of `packages`: for each module in one, the shortest
    circle through it (each circle once), as [a, b, ..., a]."""
    graph = {
        name: sorted({item.target for item in module.imports
                      if item.target in modules and within(item.target, packages)})
        for name, module in modules.items()
        if within(name, packages)
    }
    return graph_circles(graph)


def graph_circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The circles of a graph given as each node's children (all of them nodes): for each node in
    one, the shortest circle through it (each circle once), as [a, b, ..., a]."""
    found: dict[tuple[str, ...], list[str]] = {}
    for start in sorted(graph):
        circle = _shortest_circle(graph, start)
        if circle:
            at = circle.index(min(circle[:-1]))
            key = tuple(circle[at:-1] + circle[:at])
            found.setdefault(key, [*key, key[0]])
    return sorted(found.values())


def _shortest_circle(graph: dict[str, list[str]], start: str) -> list[str]:
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in graph[node]:
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return []
