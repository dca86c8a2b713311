"""The streaming reads in a model's compiled SQL: `stream(<table>)`, with Spark's options after
it when it has any (stream_changes and stream_appends render `with ('readChangeFeed' = 'true')`
and the like; a checkpoint reset adds a starting version)."""

from __future__ import annotations

import re

# Groups: table, options (the text inside `with (...)`, if any).
STREAM_READ = re.compile(r"\bstream\s*\(\s*(?P<table>[^()]+?)\s*\)(?:\s*with\s*\((?P<options>[^()]*)\))?", re.I)
_OPTION = re.compile(r"""['"`]?([\w.]+)['"`]?\s*=\s*(?:'([^']*)'|"([^"]*)"|([\w.-]+))""")


def stream_options(text: str) -> dict[str, str]:
    """The options of `stream(t) with (<text>)`: 'key' = 'value' pairs."""
    return {m.group(1): next(v for v in m.groups()[1:] if v is not None) for m in _OPTION.finditer(text)}
