"""One column of a Parquet file read in plain Python: how many rows hold it, and its strings.

Enough for a Delta checkpoint (python_runners/testing/delta_log.py counts its `remove` entries and
lists its `add` paths) from a process without a JVM or pyarrow: the footer and page headers
(Thrift's compact protocol), data pages v1 and v2, definition levels (RLE / bit-packed hybrid),
byte-array values PLAIN or dictionary-encoded, pages uncompressed, Snappy or gzip. A column
under a repeated field, another codec or another value encoding raises ParquetError.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

MAGIC = b"PAR1"
OPTIONAL, REPEATED = 1, 2  # FieldRepetitionType (0 is REQUIRED)
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3
PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY = 0, 2, 8
UNCOMPRESSED, SNAPPY, GZIP = 0, 1, 2


class ParquetError(ValueError):
    """The file is not Parquet, or uses what this reader does not read."""


@dataclass(frozen=True)
class Column:
    path: tuple[str, ...]
    max_definition: int
    max_repetition: int


def present_count(file: Path | str, path: Sequence[str]) -> int:
    """Rows in which the column at `path` (e.g. ("remove", "path")) is not null; 0 when the file
    has no such column."""
    return sum(defined for defined, _values in _pages(file, tuple(path), values=False))


def string_values(file: Path | str, path: Sequence[str]) -> list[str]:
    """The column's non-null values as text (a byte-array column), in row order."""
    return [value for _defined, values in _pages(file, tuple(path), values=True) for value in values]


def _pages(file: Path | str, path: tuple[str, ...], values: bool):
    """Per data page: in how many of its rows the column is defined, and (with `values`) their
    values."""
    data = Path(file).read_bytes()
    if len(data) < 12 or data[:4] != MAGIC or data[-4:] != MAGIC:
        raise ParquetError(f"{file} is not a Parquet file")
    footer_length = struct.unpack("<i", data[-8:-4])[0]
    metadata, _end = _Thrift(data, len(data) - 8 - footer_length).struct()
    column = _columns(metadata[2]).get(path)
    if column is None:
        return
    if column.max_repetition:
        raise ParquetError(f"{file}: column {'.'.join(path)} is under a repeated field")
    for row_group in metadata.get(4, []):
        for chunk in row_group[1]:
            meta = chunk[3]
            if tuple(name.decode() for name in meta[3]) == path:
                yield from _chunk_pages(data, meta, column, values, file)


def _columns(schema: list[dict]) -> dict[tuple[str, ...], Column]:
    """The leaf columns of the flattened schema (depth first; the first element is the root)."""
    found: dict[tuple[str, ...], Column] = {}

    def walk(index: int, parent: tuple[str, ...], definition: int, repetition: int) -> int:
        element = schema[index]
        repetition_type = element.get(3, 0)
        definition += repetition_type in (OPTIONAL, REPEATED)
        repetition += repetition_type == REPEATED
        path = (*parent, element[4].decode())
        index += 1
        children = element.get(5, 0)
        if not children:
            found[path] = Column(path, definition, repetition)
        for _ in range(children):
            index = walk(index, path, definition, repetition)
        return index

    index = 1
    for _ in range(schema[0].get(5, 0)):
        index = walk(index, (), 0, 0)
    return found


def _chunk_pages(data: bytes, meta: dict, column: Column, values: bool, file):
    codec, remaining = meta[4], meta[5]
    offset = min(meta.get(11) or meta[9], meta[9])  # the dictionary page, if any, comes first
    dictionary: list[str] = []
    while remaining > 0:
        header, offset = _Thrift(data, offset).struct()
        body, offset = data[offset:offset + header[3]], offset + header[3]
        kind = header[1]
        if kind == DICTIONARY_PAGE:
            if values:
                dictionary = _plain_strings(_decompress(body, codec, file), header[7][1])
            continue
        if kind == DATA_PAGE:
            page = header[5]
            count, encoding = page[1], page[2]
            raw = _decompress(body, codec, file)
            start = 4 + struct.unpack("<i", raw[:4])[0] if column.max_definition else 0
            levels = _levels(raw[4:start], column, count)
        elif kind == DATA_PAGE_V2:
            page = header[8]
            count, encoding = page[1], page[4]
            repetition_length, definition_length = page.get(6, 0), page.get(5, 0)
            levels_end = repetition_length + definition_length
            levels = _levels(body[repetition_length:levels_end], column, count)
            raw = _decompress(body[levels_end:], codec, file) if page.get(7, True) else body[levels_end:]
            start = 0
        else:
            continue  # an index page
        remaining -= count
        defined = levels.count(column.max_definition)
        yield defined, (_values(raw[start:], encoding, defined, dictionary, file) if values else [])


def _levels(raw: bytes, column: Column, count: int) -> list[int]:
    """A page's definition levels (none written when the column and its parents are required)."""
    if not column.max_definition:
        return [0] * count
    return _hybrid(raw, _width(column.max_definition), count)


def _values(raw: bytes, encoding: int, count: int, dictionary: list[str], file) -> list[str]:
    if encoding == PLAIN:
        return _plain_strings(raw, count)
    if encoding in (PLAIN_DICTIONARY, RLE_DICTIONARY):
        return [dictionary[index] for index in _hybrid(raw[1:], raw[0], count)] if count else []
    raise ParquetError(f"{file}: value encoding {encoding} is not read here")


def _plain_strings(raw: bytes, count: int) -> list[str]:
    found, offset = [], 0
    for _ in range(count):
        length = struct.unpack("<i", raw[offset:offset + 4])[0]
        found.append(raw[offset + 4:offset + 4 + length].decode("utf-8"))
        offset += 4 + length
    return found


def _width(max_level: int) -> int:
    return max_level.bit_length()


def _hybrid(raw: bytes, width: int, count: int) -> list[int]:
    """`count` values of the RLE / bit-packed hybrid encoding, `width` bits each."""
    found: list[int] = []
    offset, value_bytes, mask = 0, (width + 7) // 8, (1 << width) - 1
    while len(found) < count:
        header, offset = _varint(raw, offset)
        if header & 1:  # bit-packed: (header >> 1) groups of 8 values
            groups = header >> 1
            bits = int.from_bytes(raw[offset:offset + groups * width], "little")
            offset += groups * width
            found.extend((bits >> (i * width)) & mask for i in range(groups * 8))
        else:  # a run: (header >> 1) times one value
            value = int.from_bytes(raw[offset:offset + value_bytes], "little")
            offset += value_bytes
            found.extend([value] * (header >> 1))
        if offset > len(raw) and len(found) < count:
            raise ParquetError("levels end early")
    return found[:count]


def _varint(raw: bytes, offset: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = raw[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset
        shift += 7


def _decompress(body: bytes, codec: int, file) -> bytes:
    if codec == UNCOMPRESSED:
        return body
    if codec == SNAPPY:
        return snappy_decompress(body)
    if codec == GZIP:
        return zlib.decompress(body, 47)  # gzip or zlib header
    raise ParquetError(f"{file}: compression codec {codec} is not read here")


def snappy_decompress(raw: bytes) -> bytes:
    """A raw Snappy block (as Parquet pages hold them): its length, then literals and copies."""
    length, offset = _varint(raw, 0)
    out = bytearray()
    while offset < len(raw):
        tag = raw[offset]
        offset += 1
        kind = tag & 3
        if kind == 0:  # a literal
            size = tag >> 2
            if size >= 60:
                extra = size - 59
                size = int.from_bytes(raw[offset:offset + extra], "little")
                offset += extra
            out += raw[offset:offset + size + 1]
            offset += size + 1
            continue
        if kind == 1:
            size, distance = ((tag >> 2) & 7) + 4, ((tag >> 5) << 8) | raw[offset]
            offset += 1
        else:
            width = 2 if kind == 2 else 4
            size, distance = (tag >> 2) + 1, int.from_bytes(raw[offset:offset + width], "little")
            offset += width
        if not 0 < distance <= len(out):
            raise ParquetError("a Snappy copy reaches before the start")
        start = len(out) - distance
        if distance >= size:
            out += out[start:start + size]
        else:  # overlapping: the copy repeats what it just wrote
            for i in range(size):
                out.append(out[start + i])
    if len(out) != length:
        raise ParquetError(f"Snappy block says {length} bytes, holds {len(out)}")
    return bytes(out)


class _Thrift:
    """Thrift's compact protocol, read into dicts by field id (structs), lists, ints and bytes."""

    def __init__(self, data: bytes, offset: int):
        self.data, self.offset = data, offset

    def struct(self) -> tuple[dict, int]:
        return self._struct(), self.offset

    def _byte(self) -> int:
        self.offset += 1
        return self.data[self.offset - 1]

    def _int(self) -> int:
        value, self.offset = _varint(self.data, self.offset)
        return (value >> 1) ^ -(value & 1)  # zigzag

    def _struct(self) -> dict:
        fields, field_id = {}, 0
        while True:
            header = self._byte()
            if header == 0:
                return fields
            delta, kind = header >> 4, header & 0x0F
            field_id = field_id + delta if delta else self._int()
            fields[field_id] = self._value(kind)

    def _value(self, kind: int):
        if kind in (1, 2):  # a bool field: the type says it
            return kind == 1
        if kind == 3:
            return self._byte()
        if kind in (4, 5, 6):
            return self._int()
        if kind == 7:
            self.offset += 8
            return struct.unpack("<d", self.data[self.offset - 8:self.offset])[0]
        if kind == 8:
            length, self.offset = _varint(self.data, self.offset)
            self.offset += length
            return self.data[self.offset - length:self.offset]
        if kind in (9, 10):
            header = self._byte()
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size, self.offset = _varint(self.data, self.offset)
            if element in (1, 2):  # bools in a list: one byte each
                return [self._byte() == 1 for _ in range(size)]
            return [self._value(element) for _ in range(size)]
        if kind == 11:
            size, self.offset = _varint(self.data, self.offset)
            if not size:
                return {}
            types = self._byte()
            return dict((self._value(types >> 4), self._value(types & 0x0F)) for _ in range(size))
        if kind == 12:
            return self._struct()
        raise ParquetError(f"Thrift type {kind} at byte {self.offset}")
