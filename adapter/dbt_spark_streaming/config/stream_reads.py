"""The streaming reads in a model's SQL, found by one parser, and the names of source views.

A model streams from an upstream table or a source. As written (dbt's raw code) that is
`stream({{ ref('m') }})`, `{{ stream_changes(ref('m')) }}`, `{{ stream_appends(ref('m')) }}` or
the same with `source('s', 't')`; compiled, `stream(<table>)` with Spark's options after it when
it has any (stream_changes renders `with ('readChangeFeed' = 'true')`, stream_appends
`skipChangeCommits`, a checkpoint reset adds a starting version), or the temp view a meta.stream
source is read through. `stream_reads` finds each of them; `replace_reads` rewrites them.

Comments and string literals are not parsed: a read in a comment counts, as it always has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

# What a read reads.
TABLE = "table"  # compiled: stream(<table>), the table as the SQL names it
SOURCE_VIEW = "source_view"  # compiled: the view of a meta.stream source (source_view_name)
REF = "ref"  # as written: a stream of {{ ref('m') }}, the relation is the model's name
SOURCE = "source"  # as written: a stream of {{ source('s', 't') }}, the relation is "s.t"

# The options each read macro renders after stream(...) (adapter macros, change_feed.sql).
_MACRO_OPTIONS = {
    "stream": {},
    "stream_changes": {"readChangeFeed": "true"},
    "stream_appends": {"skipChangeCommits": "true"},
}
# The views source() names for a meta.stream source (sources/views.py registers them).
_VIEW_PREFIXES = {True: "stream_source__", False: "batch_source__"}
RESET_VIEW_SUFFIX = "__from_reset__"

_READ = re.compile(
    r"\b(?P<macro>stream(?:_changes|_appends)?)\s*\(\s*(?:"
    # as written: ref(...) or source(...), in {{ }} or as a macro's argument
    r"(?:\{\{-?\s*)?(?P<call>ref|source)\s*\((?P<args>(?:[^()]|\([^()]*\))*)\)(?:\s*-?\}\})?\s*\)?"
    # compiled: a table
    r"|(?P<table>[^()]+?)\s*\))"
    r"(?:\s*with\s*\((?P<options>[^()]*)\))?"
    # compiled: the name the checkpoint knows it by (name_stream_reads)
    r"(?:\s+identified\s+by\s+(?P<source_name>\w+))?"
    # any other name: a source view, or nothing read
    r"|(?<![\w$])(?P<name>\w+)(?![\w$])",
    re.IGNORECASE,
)
# The names ref() and source() are given: ref('m'), ref('package', 'm'), source('s', 't').
_NAMES = re.compile(r"""\s*(['"])([^'"]+)\1(?:\s*,\s*(['"])([^'"]+)\3)?""")
_OPTION = re.compile(r"""['"`]?([\w.]+)['"`]?\s*=\s*(?:'([^']*)'|"([^"]*)"|([\w.-]+))""")


@dataclass(frozen=True)
class StreamRead:
    """One streaming read in a model's SQL."""

    kind: str  # TABLE, SOURCE_VIEW, REF or SOURCE
    relation: str  # the table or view as the SQL names it; a ref's model; a source's "s.t"
    options: Mapping[str, str] = field(default_factory=dict)  # Spark's, a macro's own included
    text: str = ""  # the read as the SQL writes it, options included
    start: int = 0  # where `text` is in the SQL
    end: int = 0
    options_text: str = ""  # what its `with (...)` holds, as written
    source_name: str = ""  # compiled: its `identified by <name>`, if it has one

    @property
    def follows_changes(self) -> bool:
        """A read of the table's change data feed: a rewrite arrives as deletes and inserts."""
        return self._option_is_true("readChangeFeed")

    @property
    def follows_rewrites(self) -> bool:
        """A read that goes on over a commit that removed rows: reading its deletes (the change
        data feed) or skipping it (skipChangeCommits)."""
        return self.follows_changes or self._option_is_true("skipChangeCommits")

    def with_options(self, options: Mapping[str, str]) -> str:
        """The compiled read with `options` after its own."""
        said = ", ".join(f"'{key}' = '{value}'" for key, value in options.items())
        existing = self.options_text.strip()
        return (f"stream({self.relation}) with ({existing + ', ' if existing else ''}{said})"
                + (f" identified by {self.source_name}" if self.source_name else ""))

    def named(self, name: str) -> str:
        """The compiled read with the name its checkpoint knows it by."""
        options = f" with ({self.options_text.strip()})" if self.options_text.strip() else ""
        return f"stream({self.relation}){options} identified by {name}"

    def _option_is_true(self, option: str) -> bool:
        return any(key.lower() == option.lower() and value.lower() == "true"
                   for key, value in self.options.items())


def stream_reads(sql: str) -> list[StreamRead]:
    """The streaming reads in the SQL (as written or compiled), in the order it names them."""
    return [read for read in map(_read, _READ.finditer(sql or "")) if read is not None]


def replace_reads(sql: str, replacement: Callable[[StreamRead], Optional[str]]) -> str:
    """The SQL with each streaming read's text replaced by `replacement(read)`; a read it gives
    None for stays as it is."""
    def replaced(match: re.Match) -> str:
        read = _read(match)
        new = replacement(read) if read is not None else None
        return match.group(0) if new is None else new

    return _READ.sub(replaced, sql)


def stream_options(text: str) -> dict[str, str]:
    """The options of `stream(t) with (<text>)`: 'key' = 'value' pairs."""
    return {m.group(1): next(v for v in m.groups()[1:] if v is not None) for m in _OPTION.finditer(text)}


def name_stream_reads(sql: str) -> str:
    """The compiled SQL with a name on each stream(<table>) read that has none
    (`identified by <name>`): the checkpoint keys the read's offsets by it, so that a model can
    gain or lose an input and keep the others' progress. The name is the table's own (its last
    part), and a second read of a name in one query gets `_2`, and so on. A stream of a
    source's view is the view."""
    taken = {read.source_name.lower() for read in stream_reads(sql) if read.source_name}

    def named(read: StreamRead) -> Optional[str]:
        if read.kind != TABLE or read.source_name:
            return None
        if is_source_view(read.relation.strip("` ")):
            # A source's view is a stream named already (sources/frames.py). Spark 4.2 takes
            # stream(<view>) for a source of its own, which has no name: the view is read as is.
            return None if read.options_text.strip() else read.relation
        return read.named(_unique(table_input_name(read.relation), taken))

    return replace_reads(sql, named)


def table_input_name(relation: str) -> str:
    """The name of a stream(<table>) read: the table's own name, without its schema or catalog
    (the same in a dev schema and in production)."""
    last = re.split(r"\.(?=(?:[^`]*`[^`]*`)*[^`]*$)", relation.strip())[-1]
    return _identifier(last.strip("` "))


def source_input_name(source_name: str) -> str:
    """The name of a meta.stream source's stream: `<source>__<table>`."""
    return _identifier(source_name.replace(".", "__"))


def _identifier(text: str) -> str:
    """Letters, digits and `_` only, as Spark's source names must be."""
    return re.sub(r"[^0-9A-Za-z_]", "_", text) or "input"


def _unique(name: str, taken: set[str]) -> str:
    candidate, count = name, 1
    while candidate.lower() in taken:
        count += 1
        candidate = f"{name}_{count}"
    taken.add(candidate.lower())
    return candidate


def source_view_name(source_name: str, streaming: bool = True) -> str:
    """The temp view a model reads a meta.stream source through: one for streams, one for batch
    reads. The one place that names them."""
    return f"{_VIEW_PREFIXES[streaming]}{source_name.replace('.', '__')}"


def reset_view_name(view: str, model: str) -> str:
    """The view a pending checkpoint reset gives one model of a source's view (lifecycle/reset/reset_reads.py)."""
    return f"{view}{RESET_VIEW_SUFFIX}{re.sub(r'[^0-9a-zA-Z_]', '_', model)}"


def is_source_view(name: str, streaming: bool = True) -> bool:
    """A view source_view_name named (or one named after it, as a checkpoint reset's own view
    of the source), in any case: Spark's view names are case-insensitive."""
    prefix = _VIEW_PREFIXES[streaming]
    return len(name) > len(prefix) and name.lower().startswith(prefix)


def _read(match: re.Match) -> Optional[StreamRead]:
    where = {"text": match.group(0), "start": match.start(), "end": match.end()}
    if match["name"] is not None:
        name = match["name"]
        return StreamRead(SOURCE_VIEW, name, **where) if is_source_view(name) else None
    macro = match["macro"].lower()
    options_text = match["options"] or ""
    options = {**_MACRO_OPTIONS[macro], **stream_options(options_text)}
    if match["table"] is not None:
        if macro != "stream":
            return None  # stream_changes(...) is a macro: compiled, it is stream(...) with options
        return StreamRead(TABLE, match["table"], options, options_text=options_text,
                          source_name=match["source_name"] or "", **where)
    names = _NAMES.match(match["args"])
    if names is None:
        return None  # ref(var('m')): no name to read
    first, second = names.group(2), names.group(4)
    if match["call"].lower() == "source":
        return StreamRead(SOURCE, f"{first}.{second}", options, options_text=options_text,
                          **where) if second else None
    return StreamRead(REF, second or first, options, options_text=options_text, **where)


def reads_of(sql: str, model: str) -> list[StreamRead]:
    """Each streaming read of `model` (a ref of it, in any case) in a model's SQL as written."""
    return [read for read in stream_reads(sql) if read.kind == REF and read.relation.lower() == model.lower()]
