"""`make lint`'s import rules: `python -m python_runners.ops.import_rules [REPO]`.

Reads every .py file under python_runners/ (and adapter/, when there is one: the installable
runtime dbt_spark_streaming and the dbt plugin) with `ast`, every import in it (at the top,
inside functions, under `if TYPE_CHECKING:`; import_graph.py), and checks:

1. no import circle among python_runners' modules or the runtime's;
2. the order of the runtime's rooms (the packages under it: run/, serve/, writes/, ...; a room's
   sub-packages are part of it): each room's __init__.py says in its docstring which rooms it
   may import (`May import: ...`, read by rooms.py), those lines make no loop, every import
   from one room into another is one its line allows, and no imports make a loop of rooms;
3. the rules below (`IMPORT_RULES`, `HANDLE_RULES`): the runtime and the plugin without this
   repository's tools, the plugin through the runtime's face only, config without Spark, and
   where py4j's handles on the JVM may be used;
4. the runtime's root holds only the modules in `ROOT_MODULES`, which every room may import;
   anything else lives in a room.

A new room is a folder with an __init__.py that says what it is for and `May import: ...`
(the package command's, on top of all others, `May import: every room`); nothing here changes.

`from dbt_spark_streaming import X`, where X is a module, is an import of that module. The
runtime's face (adapter/dbt_spark_streaming/__init__.py) imports its names by strings, when first
used: it has no imports to check. Exits 1 and says what breaks a rule, and where; adding a
rule is one line in a table below.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from python_runners.ops.import_graph import Import, Module, circles, graph_circles, read_modules, within
from python_runners.ops.rooms import MAY_IMPORT, Room, allowed, order_problems, read_rooms

RT = "dbt_spark_streaming"  # the runtime, installed with the adapter (adapter/)
RUNTIME = Path("adapter", RT)


def _under(package: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{package}.{name}" for name in names)


@dataclass(frozen=True)
class ImportRule:
    """Modules under `importer` import no module under any of `forbidden` (dotted prefixes),
    except by a statement written exactly as one of `allowed`."""

    importer: str
    forbidden: tuple[str, ...]
    why: str
    allowed: tuple[str, ...] = ()


@dataclass(frozen=True)
class HandleRule:
    """Only modules under `allowed_in` use these attributes (found as `x.<attribute>`)."""

    attributes: tuple[str, ...]
    allowed_in: tuple[str, ...]
    why: str


ADAPTER = "dbt.adapters.spark_streaming"

IMPORT_RULES: tuple[ImportRule, ...] = (
    ImportRule(f"{RT}.config", _under(RT, "session", "jvm_options", "jvm", "delta"),
               "config is read without Spark: by dbt's parse, `make lint` and the unit tier"),
    ImportRule(RT, ("python_runners",),
               "the runtime is installed without this repository; ops, infra, demo and testing are "
               "this repository's tools around it"),
    ImportRule(ADAPTER, ("python_runners",), "the adapter is installed without this repository"),
    ImportRule(ADAPTER, (RT,),
               "the adapter uses only the names the runtime's face exports, so the modules under it "
               "can move and split", allowed=("import dbt_spark_streaming as runtime",)),
)

HANDLE_RULES: tuple[HandleRule, ...] = (
    HandleRule(("_jvm", "_jsparkSession", "_jdf", "_jsc"),
               (f"{RT}.jvm", f"{RT}.delta", f"{RT}.session", f"{RT}.driver"),
               "the JVM boundary is two rooms: what the runtime asks of the JVM is a named function "
               "in runtime/jvm/ (files, plans, checkpoints) or runtime/delta/ (Delta tables); the "
               "session's own handles stay in runtime/session.py, and the warm driver's, which "
               "hands sessions of its JVM to other processes, in runtime/driver/"),
)

# The runtime's root: the face and what every room uses. Any other module lives in a room.
ROOT_MODULES = ("__init__", "session", "errors", "lakehouse", "classpath", "metastore", "run_lock",
                "jvm_options", "java_runtime", "command_line")

ROOTS = ("python_runners", "adapter")  # folders of the repository read; adapter/ is optional
PACKAGES = ("python_runners", RT)  # where import circles are looked for


def _said(item: Import) -> str:
    return f"`{item.statement}`" + (f" ({item.where})" if item.where else "")


def circle_problems(modules: dict[str, Module]) -> list[str]:
    said = []
    for circle in circles(modules, PACKAGES):
        lines = [f"import circle: {' -> '.join(circle)}"]
        for importer, imported in zip(circle, circle[1:]):
            module = modules[importer]
            for item in module.imports:
                if item.target == imported:
                    lines.append(f"    {module.path}:{item.line}: {_said(item)}")
        said.append("\n".join(lines))
    return said


def rule_problems(modules: dict[str, Module]) -> list[str]:
    """One problem per rule broken: the rule and why, then each import or use that breaks it."""
    said = []
    for rule in IMPORT_RULES:
        found = [
            f"    {module.path}:{item.line}: {_said(item)}"
            for module in modules.values() if within(module.name, [rule.importer])
            for item in module.imports
            if within(item.target, rule.forbidden) and item.statement not in rule.allowed
        ]
        if found:
            said.append("\n".join([f"{_rule_text(rule, modules)} ({rule.why}):", *found]))
    for rule in HANDLE_RULES:
        found = []
        for module in modules.values():
            if within(module.name, rule.allowed_in):
                continue
            lines: dict[int, list[str]] = {}
            for line, attribute in module.handles:
                if attribute in rule.attributes and attribute not in lines.setdefault(line, []):
                    lines[line].append(attribute)
            found += [f"    {module.path}:{line}: {', '.join(used)}" for line, used in lines.items() if used]
        if found:
            *others, last = [_as_path(name, modules) for name in rule.allowed_in]
            allowed = f"{', '.join(others)} and {last}" if others else last
            said.append("\n".join([f"only {allowed} use {', '.join(rule.attributes)} ({rule.why}):", *found]))
    return said


def room_of(name: str, rooms: dict[str, Room]) -> Optional[str]:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == RT and parts[1] in rooms else None


def room_problems(modules: dict[str, Module], rooms: dict[str, Room]) -> list[str]:
    """Imports between rooms that their `May import:` lines do not allow, and loops of rooms."""
    said = order_problems(rooms)
    upward: dict[str, list[str]] = {}
    between: dict[tuple[str, str], tuple[Module, Import]] = {}  # the first from one room into another
    for module in modules.values():
        room = room_of(module.name, rooms)
        if room is None:
            continue
        for item in module.imports:
            other = room_of(item.target, rooms)
            if other is None or other == room:
                continue
            between.setdefault((room, other), (module, item))
            if rooms[room].may_import is not None and other not in allowed(rooms[room], rooms):
                upward.setdefault(room, []).append(
                    f"    {module.path}:{item.line}: {_said(item)}: runtime/{other}/")
    for room, found in upward.items():
        may = sorted(allowed(rooms[room], rooms)) if rooms[room].every_room else rooms[room].may_import
        said.append("\n".join([
            f"runtime/{room}/ may import only {', '.join(may) or 'no room'} (`{MAY_IMPORT}` in "
            f"{rooms[room].init}); a module that another room needs goes down to where it belongs:",
            *found]))
    graph: dict[str, list[str]] = {room: [] for room in rooms}
    for room, other in between:
        graph[room].append(other)
    for circle in graph_circles(graph):
        lines = [f"rooms in a loop: {' -> '.join(circle)}"]
        for room, other in zip(circle, circle[1:]):
            importer, item = between[(room, other)]
            lines.append(f"    {importer.path}:{item.line}: {_said(item)}")
        said.append("\n".join(lines))
    return said


def root_problems(modules: dict[str, Module], rooms: dict[str, Room]) -> list[str]:
    said = []
    for module in modules.values():
        parent, _, last = module.name.rpartition(".")
        if parent == RT and not module.is_package and last not in ROOT_MODULES:
            rooms_said = "; ".join(f"{name}/ ({room.what})" for name, room in rooms.items())
            said.append(
                f"{module.path}: the runtime's root holds only {', '.join(ROOT_MODULES)}; put "
                f"{last}.py in a room: {rooms_said}."
            )
    return said


def _rule_text(rule: ImportRule, modules: dict[str, Module]) -> str:
    importer = _as_path(rule.importer, modules)
    if rule.allowed:
        return (f"{importer} imports {', '.join(rule.forbidden)} only as "
                f"{' or '.join(f'`{statement}`' for statement in rule.allowed)}")
    return f"{importer} imports nothing from {', '.join(_as_path(name, modules) for name in rule.forbidden)}"


def _as_path(name: str, modules: dict[str, Module]) -> str:
    """dbt_spark_streaming.writes -> runtime/writes/; ...session -> runtime/session.py;
    python_runners.ops -> ops/; the adapter's modules under adapter/."""
    if within(name, [RT]):
        shown = "runtime" + name.removeprefix(RT).replace(".", "/")
    elif within(name, [ADAPTER]):
        shown = "adapter/" + name.replace(".", "/")
    else:
        shown = name.removeprefix("python_runners.").replace(".", "/")
    return f"{shown}.py" if name in modules and not modules[name].is_package else f"{shown}/"


def check(repo: Path, roots: Sequence[str] = ROOTS) -> list[str]:
    """Every broken rule, said with where; [] when the tree keeps them all."""
    modules, broken = read_modules(repo, [root for root in roots if (repo / root).is_dir()])
    rooms = read_rooms(repo, RUNTIME) if RUNTIME.parts[0] in roots else {}
    return [*broken, *circle_problems(modules), *room_problems(modules, rooms), *rule_problems(modules),
            *root_problems(modules, rooms)]


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    repo = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    problems = check(repo)
    for problem in problems:
        print(problem)
    if problems:
        print("make lint: import rules broken (above); the rules, and why, are in "
              "python_runners/ops/import_rules.py.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
