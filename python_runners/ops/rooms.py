"""The runtime's rooms, as each says in its own __init__.py: what the room is for (its docstring's
first paragraph) and which rooms it may import, in a line of that docstring:

    May import: writes, sources, progress, delta, jvm, config

or `May import: nothing`, or `May import: every room` (the package command's room, on top of all
of them). A room is a package directly under the runtime (adapter/dbt_spark_streaming/); a
package inside one (writes/cdc/) is part of it. Read with `ast`: the runtime is not imported.

The order of the rooms is these lines: import_rules.py checks every import between two rooms
against them, and here, that each room has one, names only rooms, and that they make no loop.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from python_runners.ops.import_graph import graph_circles

MAY_IMPORT = "May import:"
NOTHING = "nothing"
EVERY_ROOM = "every room"


@dataclass(frozen=True)
class Room:
    name: str
    init: Path  # its __init__.py, relative to the repository
    what: str  # its docstring's first paragraph, up to a colon
    may_import: Optional[tuple[str, ...]]  # as written; None: no `May import:` line
    every_room: bool = False


def read_rooms(repo: Path, runtime: Path) -> dict[str, Room]:
    """The rooms under `runtime` (a folder relative to `repo`), by name; {} without one."""
    rooms = {}
    folder = repo / runtime
    if not folder.is_dir():
        return rooms
    for init in sorted(folder.glob("*/__init__.py")):
        try:
            docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        except SyntaxError:
            docstring = ""  # import_graph says the file does not parse
        name = init.parent.name
        rooms[name] = Room(name, init.relative_to(repo), _what(docstring), *_may_import(docstring))
    return rooms


def _what(docstring: str) -> str:
    first = " ".join(docstring.split("\n\n", 1)[0].split())
    return first.split(":", 1)[0].rstrip(".")


def _may_import(docstring: str) -> tuple[Optional[tuple[str, ...]], bool]:
    for line in docstring.splitlines():
        if line.strip().startswith(MAY_IMPORT):
            said = line.strip().removeprefix(MAY_IMPORT).strip().rstrip(".")
            if said == EVERY_ROOM:
                return (), True
            if said == NOTHING:
                return (), False
            return tuple(name.strip().rstrip("/") for name in said.split(",") if name.strip()), False
    return None, False


def allowed(room: Room, rooms: dict[str, Room]) -> set[str]:
    """The rooms `room` may import."""
    if room.every_room:
        return set(rooms) - {room.name}
    return set(room.may_import or ())


def order_problems(rooms: dict[str, Room]) -> list[str]:
    said = []
    for room in rooms.values():
        if room.may_import is None:
            said.append(f"{room.init}: a room says in its docstring which rooms it may import, in a line "
                        f"`{MAY_IMPORT} a, b` (rooms below it), `{MAY_IMPORT} {NOTHING}` or "
                        f"`{MAY_IMPORT} {EVERY_ROOM}`.")
        unknown = [name for name in room.may_import or () if name not in rooms]
        if unknown:
            said.append(f"{room.init}: `{MAY_IMPORT}` names {', '.join(unknown)}, not rooms "
                        f"(the rooms: {', '.join(rooms)}).")
    graph = {name: sorted(allowed(room, rooms) & set(rooms)) for name, room in rooms.items()}
    for circle in graph_circles(graph):
        said.append(f"the rooms' order has a loop: {' -> '.join(circle)} (each room's `{MAY_IMPORT}` "
                    f"line, in {', '.join(str(rooms[name].init) for name in circle[:-1])}); one of them "
                    f"must go below the others.")
    return said
