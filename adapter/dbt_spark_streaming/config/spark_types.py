"""Spark SQL data types in Spark's own spelling (`int`, `bigint`, `decimal(10,2)`,
`struct<a:int>`), from any spelling Spark's SQL parser accepts (`integer`, `long`, `numeric`):
how a contract's declared types are compared with a query's (config/contracts.py).

Read without Spark: a small parser of the type's text, not Spark's.
"""

from __future__ import annotations

import re

_SYNONYMS = {
    "integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint", "real": "float",
    "bool": "boolean", "timestamp_ltz": "timestamp", "dec": "decimal", "numeric": "decimal",
    "character": "char",
}
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\w+|\S)")


def canonical_type(text: str) -> str:
    """A Spark SQL type as Spark's simpleString spells it: 'INTEGER' -> 'int', 'numeric(5, 2)' ->
    'decimal(5,2)', 'struct<a: long>' -> 'struct<a:bigint>'. Lowercase, so names compare without
    case; text that is not a type Spark knows is only lowercased and stripped of spaces."""
    tokens = _TOKEN.findall(text.strip())
    try:
        parsed, rest = _type(tokens, 0)
    except (IndexError, ValueError):
        return re.sub(r"\s+", " ", text.strip().lower())
    if rest != len(tokens):
        return re.sub(r"\s+", " ", text.strip().lower())
    return parsed


def _type(tokens: list[str], at: int) -> tuple[str, int]:
    name = _SYNONYMS.get(tokens[at].lower(), tokens[at].lower())
    at += 1
    if name == "array":
        element, at = _type(tokens, _expect(tokens, at, "<"))
        return f"array<{element}>", _expect(tokens, at, ">")
    if name == "map":
        key, at = _type(tokens, _expect(tokens, at, "<"))
        value, at = _type(tokens, _expect(tokens, at, ","))
        return f"map<{key},{value}>", _expect(tokens, at, ">")
    if name == "struct":
        return _struct(tokens, _expect(tokens, at, "<"))
    if name == "interval":
        units = []
        while at < len(tokens) and tokens[at].lower() in ("year", "month", "day", "hour", "minute", "second", "to"):
            units.append(tokens[at].lower())
            at += 1
        if len(units) == 3 and units[0] == units[2]:
            units = units[:1]
        return " ".join(["interval", *units]), at
    if name == "string" and at < len(tokens) and tokens[at].lower() == "collate":
        collation = tokens[at + 1].strip("`").lower()
        return ("string" if collation == "utf8_binary" else f"string collate {collation}"), at + 2
    arguments, at = _arguments(tokens, at)
    if name == "decimal":
        precision, scale = [*arguments, "10", "0"][:2] if len(arguments) != 1 else [arguments[0], "0"]
        return f"decimal({precision},{scale})", at
    return (f"{name}({','.join(arguments)})" if arguments else name), at


def _struct(tokens: list[str], at: int) -> tuple[str, int]:
    fields = []
    while tokens[at] != ">":
        field = tokens[at].strip("`").replace("``", "`").lower()
        at += 1
        if tokens[at] == ":":
            at += 1
        data_type, at = _type(tokens, at)
        while tokens[at] not in (",", ">"):  # NOT NULL, COMMENT '...': not part of the type
            at += 1
        fields.append(f"{field}:{data_type}")
        if tokens[at] == ",":
            at += 1
    return f"struct<{','.join(fields)}>", at + 1


def _arguments(tokens: list[str], at: int) -> tuple[list[str], int]:
    if at >= len(tokens) or tokens[at] != "(":
        return [], at
    arguments, at = [], at + 1
    while tokens[at] != ")":
        if tokens[at] != ",":
            arguments.append(tokens[at].lower())
        at += 1
    return arguments, at + 1


def _expect(tokens: list[str], at: int, token: str) -> int:
    if tokens[at] != token:
        raise ValueError(f"expected {token!r} at {tokens[at]!r}")
    return at + 1

