"""The runtime's face (adapter/dbt_spark_streaming/__init__.py): the names it loads when first
used (`_FACE`) and the imports a type checker reads (`if TYPE_CHECKING:`) are the same names from
the same modules, and every module it names is a file. Read with `ast`: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "adapter" / "dbt_spark_streaming"
FACE = RUNTIME / "__init__.py"


def face_tree() -> ast.Module:
    return ast.parse(FACE.read_text(encoding="utf-8"))


def loaded_when_used() -> dict[str, tuple[str, str]]:
    """_FACE as name -> (module under the runtime, attribute)."""
    for node in face_tree().body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_FACE" for t in node.targets):
            face = ast.literal_eval(node.value)
            return {name: where if isinstance(where, tuple) else (where, name) for name, where in face.items()}
    raise AssertionError("no _FACE in the face")


def seen_by_type_checkers() -> dict[str, tuple[str, str]]:
    """The imports under `if TYPE_CHECKING:`, as name -> (module under the runtime, attribute)."""
    found = {}
    for node in face_tree().body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module, ast.unparse(statement)
                module = statement.module.removeprefix("dbt_spark_streaming.")
                for alias in statement.names:
                    found[alias.asname or alias.name] = (module, alias.name)
    return found


def test_the_type_checking_imports_are_the_names_the_face_loads():
    loaded, seen = loaded_when_used(), seen_by_type_checkers()

    assert sorted(set(loaded) - set(seen)) == []  # loaded, but unknown to a type checker
    assert sorted(set(seen) - set(loaded)) == []  # seen by a type checker, but never loaded
    assert {name: where for name, where in seen.items() if loaded[name] != where} == {}


def test_every_module_the_face_names_is_a_file():
    missing = sorted({module for module, _ in loaded_when_used().values()
                      if not (RUNTIME / (module.replace(".", "/") + ".py")).is_file()})

    assert missing == []
