"""`make lint`'s check that the repository paths the docs name exist:
`python -m python_runners.ops.doc_paths [REPO]`.

Read: README.md and docs/ (their prose: a fenced code block shows a user's project, not this
repository), and the docstrings and comments of the Python and SQL under adapter/,
python_runners/, bench/ and macros/. A name is a repository path when it ends in a file's
extension and begins with
- one of the repository's top-level folders (`docs/changing-models.md`, `adapter/...`);
- `runtime/`, the installed runtime's folder (adapter/dbt_spark_streaming/);
- in a file of the runtime, of python_runners or of the plugin's macros, one of the folders of
  that package (`lifecycle/query_fit.py` in the runtime).

Each must exist. Exits 1 and says each that does not, and where: a file moved without its
mentions leaves readers at a dead end.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Optional

RUNTIME = "adapter/dbt_spark_streaming"
RUNTIME_ALIAS = "runtime"
# Where a file's own relative names start from: the package it belongs to.
PACKAGES = (RUNTIME, "python_runners", "adapter/dbt/include/spark_streaming/macros")
SOURCE_FOLDERS = ("adapter", "python_runners", "bench", "macros")
_EXTENSIONS = "py|md|sql|yml|yaml|cfg|toml|xml|json|properties|ini|txt|sh"
_PATH = re.compile(r"(?<![\w./:-])((?:[\w-]+/)+[\w.-]+\.(?:" + _EXTENSIONS + r"))(?![\w/])")
_FENCE = re.compile(r"^\s*(```|~~~)")


class Dead(NamedTuple):
    file: str
    line: int
    path: str


def dead_paths(repo: Path, tracked: Optional[Iterable[str]] = None) -> list[Dead]:
    """`tracked`: the files git tracks (git_tracked), so that folders one machine generates are
    not taken for the repository's; None: every folder is."""
    top = _top_folders(repo, tracked)
    found = []
    for file, line, text in _mentions(repo):
        package = _package_of(repo, file)
        for match in _PATH.finditer(text):
            path = match.group(1)
            target = _target(repo, top, package, path)
            if target is not None and not target.exists():
                found.append(Dead(str(file.relative_to(repo)), line, path))
    return found


def _top_folders(repo: Path, tracked: Optional[Iterable[str]]) -> set[str]:
    """The repository's top-level folders: those with files git tracks (not dbt's target/ or
    logs/, which exist on one machine and not on another); `tracked` None: every folder."""
    folders = {entry.name for entry in repo.iterdir() if entry.is_dir() and not entry.name.startswith(".")}
    if tracked is None:
        return folders
    return folders & {path.split("/", 1)[0] for path in tracked if "/" in path}


def git_tracked(repo: Path) -> Optional[list[str]]:
    """The files git tracks in `repo`; None outside a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.splitlines() or None


def _target(repo: Path, top: set[str], package: Path | None, path: str) -> Path | None:
    """Where a mentioned path would be, or None when it is not a repository path."""
    first = path.split("/", 1)[0]
    if first == RUNTIME_ALIAS:
        return repo / RUNTIME / path.split("/", 1)[1]
    if first in top:
        return repo / path
    if package is not None and (package / first).is_dir():
        return package / path
    return None


def _package_of(repo: Path, file: Path) -> Path | None:
    for package in PACKAGES:
        if (repo / package) in file.parents:
            return repo / package
    return None


def _mentions(repo: Path) -> Iterator[tuple[Path, int, str]]:
    """(file, line number, text) of every line of prose, docstring or comment that is read."""
    for doc in [repo / "README.md", *sorted((repo / "docs").rglob("*.md"))]:
        if doc.exists():
            yield from _prose(doc)
    for folder in SOURCE_FOLDERS:
        for file in sorted((repo / folder).rglob("*")):
            if any(part.startswith(".") or part.endswith(".egg-info") for part in file.parts):
                continue
            if file.suffix == ".py":
                yield from _python_notes(file)
            elif file.suffix == ".sql":
                for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
                    yield file, number, line


def _prose(doc: Path) -> Iterator[tuple[Path, int, str]]:
    fenced = False
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield doc, number, line


def _python_notes(file: Path) -> Iterator[tuple[Path, int, str]]:
    source = file.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                for offset, line in enumerate(body[0].value.value.splitlines()):
                    yield file, body[0].lineno + offset, line
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield file, token.start[0], token.string


def main(argv: list[str]) -> int:
    repo = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    dead = dead_paths(repo, git_tracked(repo))
    for found in dead:
        print(f"{found.file}:{found.line}: names {found.path}, which does not exist")
    if dead:
        print(f"{len(dead)} path(s) named in docs, docstrings or comments do not exist: "
              "point them at where the file is now, or drop the mention.")
        return 1
    print("doc paths: every repository path named exists")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
