"""A Delta table's latest checkpoint read as files (python_runners/testing/delta_log.py, its
Parquet through python_runners/testing/parquet_file.py): the soak's tombstones and live data
files. The checkpoints are written here by a small Parquet writer of the test's own: columns
`<action>.path` of optional groups, pages v1 or v2, PLAIN or dictionary values, levels in runs
or bit-packed, uncompressed or Snappy (literals only)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

from python_runners.testing import delta_log, parquet_file

I32, I64, BINARY, LIST, STRUCT = 5, 6, 8, 9, 12
BYTE_ARRAY, OPTIONAL, UTF8 = 6, 1, 0
RLE = 3


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def thrift(fields: list[tuple[int, int, object]]) -> bytes:
    """A struct in Thrift's compact protocol: (field id, type, value), ids increasing."""
    out, last = bytearray(), 0
    for field_id, kind, value in fields:
        out.append(((field_id - last) << 4) | kind)
        last = field_id
        out += thrift_value(kind, value)
    return bytes(out + b"\x00")


def thrift_value(kind: int, value) -> bytes:
    if kind in (I32, I64):
        return varint((value << 1) ^ (value >> 63))
    if kind == BINARY:
        return varint(len(value)) + value
    if kind == STRUCT:
        return thrift(value)
    element, items = value
    header = bytes([(len(items) << 4) | element]) if len(items) < 15 else bytes([0xF0 | element]) + varint(len(items))
    return header + b"".join(thrift_value(element, item) for item in items)


def snappy_literals(raw: bytes) -> bytes:
    out = bytearray(varint(len(raw)))
    for start in range(0, len(raw), 60):
        chunk = raw[start:start + 60]
        out += bytes([(len(chunk) - 1) << 2]) + chunk
    return bytes(out)


def hybrid(values: list[int], width: int, packed: bool) -> bytes:
    if not packed:  # a run per value
        return b"".join(varint(2) + value.to_bytes((width + 7) // 8, "little") for value in values)
    groups = (len(values) + 7) // 8
    bits = sum(value << (i * width) for i, value in enumerate(values))
    return varint((groups << 1) | 1) + bits.to_bytes(groups * width, "little")


def plain(values: list[str]) -> bytes:
    return b"".join(struct.pack("<i", len(v.encode())) + v.encode() for v in values)


def write_parquet(path: Path, rows: list[dict[str, str]], actions: tuple[str, ...] = ("add", "remove"),
                  codec: int = parquet_file.UNCOMPRESSED, page_version: int = 1, dictionary: bool = False,
                  packed: bool = False, page_rows: int = 1000) -> None:
    """Rows as {action: path}; a row without an action has that group null."""
    compress = {parquet_file.UNCOMPRESSED: lambda raw: raw, parquet_file.SNAPPY: snappy_literals,
                parquet_file.GZIP: lambda raw: zlib.compress(raw)}[codec]
    out = bytearray(parquet_file.MAGIC)
    chunks = []
    for action in actions:
        column = [row.get(action) for row in rows]
        present = [value for value in column if value is not None]
        words = sorted(set(present))
        start, dictionary_offset = len(out), None
        if dictionary:
            body = plain(words)
            dictionary_offset = len(out)
            out += thrift([(1, I32, parquet_file.DICTIONARY_PAGE), (2, I32, len(body)),
                           (3, I32, len(compress(body))),
                           (7, STRUCT, [(1, I32, len(words)), (2, I32, parquet_file.PLAIN)])]) + compress(body)
        data_offset = len(out)
        for first in range(0, len(column), page_rows):
            page = column[first:first + page_rows]
            page_present = [value for value in page if value is not None]
            levels = hybrid([0 if value is None else 2 for value in page], 2, packed)
            if dictionary:
                width = max(1, (len(words) - 1).bit_length())
                values = bytes([width]) + hybrid([words.index(v) for v in page_present], width, packed)
                encoding = parquet_file.RLE_DICTIONARY
            else:
                values, encoding = plain(page_present), parquet_file.PLAIN
            if page_version == 1:
                raw = struct.pack("<i", len(levels)) + levels + values
                body = compress(raw)
                header = thrift([(1, I32, parquet_file.DATA_PAGE), (2, I32, len(raw)), (3, I32, len(body)),
                                 (5, STRUCT, [(1, I32, len(page)), (2, I32, encoding), (3, I32, RLE),
                                              (4, I32, RLE)])])
            else:
                body = levels + compress(values)
                header = thrift([(1, I32, parquet_file.DATA_PAGE_V2), (2, I32, len(levels) + len(values)),
                                 (3, I32, len(body)),
                                 (8, STRUCT, [(1, I32, len(page)), (2, I32, len(page) - len(page_present)),
                                              (3, I32, len(page)), (4, I32, encoding), (5, I32, len(levels)),
                                              (6, I32, 0)])])
            out += header + body
        meta = [(1, I32, BYTE_ARRAY), (2, LIST, (I32, [encoding, RLE])),
                (3, LIST, (BINARY, [action.encode(), b"path"])), (4, I32, codec), (5, I64, len(column)),
                (6, I64, len(out) - start), (7, I64, len(out) - start), (9, I64, data_offset)]
        if dictionary_offset is not None:
            meta.append((11, I64, dictionary_offset))
        chunks.append([(2, I64, start), (3, STRUCT, meta)])
    schema = [[(4, BINARY, b"spark_schema"), (5, I32, len(actions))]]
    for action in actions:
        schema += [[(3, I32, OPTIONAL), (4, BINARY, action.encode()), (5, I32, 1)],
                   [(1, I32, BYTE_ARRAY), (3, I32, OPTIONAL), (4, BINARY, b"path"), (6, I32, UTF8)]]
    footer = thrift([(1, I32, 1), (2, LIST, (STRUCT, schema)), (3, I64, len(rows)),
                     (4, LIST, (STRUCT, [[(1, LIST, (STRUCT, chunks)), (2, I64, len(out)),
                                          (3, I64, len(rows))]]))])
    out += footer + struct.pack("<i", len(footer)) + parquet_file.MAGIC
    path.write_bytes(bytes(out))


def checkpoint_rows(adds: list[str], removes: list[str], others: int = 2) -> list[dict[str, str]]:
    """A checkpoint's rows: protocol and metaData (`others`, neither add nor remove), then each file."""
    return [{} for _ in range(others)] + [{"add": a} for a in adds] + [{"remove": r} for r in removes]


def table_with_log(tmp_path: Path) -> tuple[Path, Path]:
    table = tmp_path / "table"
    log = delta_log.log_folder(table)
    log.mkdir(parents=True)
    return table, log


def commit(log: Path, version: int, *actions: dict) -> None:
    (log / f"{version:020d}.json").write_text("".join(json.dumps(a) + "\n" for a in actions))


def last_checkpoint(log: Path, **fields) -> None:
    (log / delta_log.LAST_CHECKPOINT).write_text(json.dumps(fields))


@pytest.mark.parametrize("codec", [parquet_file.UNCOMPRESSED, parquet_file.SNAPPY, parquet_file.GZIP])
@pytest.mark.parametrize("page_version", [1, 2])
@pytest.mark.parametrize("dictionary", [False, True])
@pytest.mark.parametrize("packed", [False, True])
def test_a_column_is_counted_and_read_in_every_shape(tmp_path, codec, page_version, dictionary, packed):
    rows = checkpoint_rows([f"part-{i:05d}.parquet" for i in range(23)],
                           [f"old-{i:05d}.parquet" for i in range(41)])
    file = tmp_path / "c.parquet"
    write_parquet(file, rows, codec=codec, page_version=page_version, dictionary=dictionary,
                  packed=packed, page_rows=10)

    assert parquet_file.present_count(file, ("remove", "path")) == 41
    assert parquet_file.present_count(file, ("add", "path")) == 23
    assert parquet_file.string_values(file, ("add", "path")) == [f"part-{i:05d}.parquet" for i in range(23)]
    assert parquet_file.present_count(file, ("txn", "appId")) == 0  # no such column


def test_snappy_copies_overlapping_and_not():
    # "abc", then 9 bytes copied from 3 back (1-byte offset, overlapping), then "xy", then 5
    # bytes from 14 back (2-byte offset): "abcabcabcabcxyabcab"
    block = varint(19) + bytes([2 << 2]) + b"abc" + bytes([(5 << 2) | 1, 3]) + bytes([1 << 2]) + b"xy" \
        + bytes([(4 << 2) | 2]) + (14).to_bytes(2, "little")
    assert parquet_file.snappy_decompress(block) == b"abcabcabcabcxyabcab"


def test_not_parquet_is_said(tmp_path):
    file = tmp_path / "c.parquet"
    file.write_bytes(b"not parquet at all")
    with pytest.raises(parquet_file.ParquetError, match="not a Parquet file"):
        parquet_file.present_count(file, ("remove", "path"))


def test_no_checkpoint_no_tombstones_and_files_from_the_commits(tmp_path):
    table, log = table_with_log(tmp_path)
    commit(log, 0, {"metaData": {}}, {"add": {"path": "a"}}, {"add": {"path": "b"}})
    commit(log, 1, {"remove": {"path": "a"}}, {"add": {"path": "c"}})

    assert delta_log.latest_checkpoint(table) is None
    assert delta_log.tombstones(table) == 0
    assert delta_log.live_data_files(table) == {"b", "c"}


def test_a_checkpoint_tombstones_and_the_commits_after_it(tmp_path):
    table, log = table_with_log(tmp_path)  # commits 0-10 cleaned up: only the checkpoint says them
    write_parquet(log / f"{10:020d}.checkpoint.parquet", checkpoint_rows(["a", "b", "c"], ["x", "y"]),
                  codec=parquet_file.SNAPPY, dictionary=True)
    last_checkpoint(log, version=10, size=7, sizeInBytes=1, numOfAddFiles=3)
    commit(log, 11, {"remove": {"path": "a"}}, {"add": {"path": "d"}})

    assert delta_log.latest_checkpoint(table).version == 10
    assert delta_log.tombstones(table) == 2
    assert delta_log.live_data_files(table) == {"b", "c", "d"}


def test_a_multi_part_checkpoint_counts_every_part(tmp_path):
    table, log = table_with_log(tmp_path)
    write_parquet(log / f"{20:020d}.checkpoint.{1:010d}.{2:010d}.parquet", checkpoint_rows(["a"], ["x", "y"]))
    write_parquet(log / f"{20:020d}.checkpoint.{2:010d}.{2:010d}.parquet",
                  checkpoint_rows(["b"], ["z"], others=0))
    write_parquet(log / f"{10:020d}.checkpoint.parquet", checkpoint_rows([], ["old"] * 50))  # not the latest
    last_checkpoint(log, version=20, size=7, parts=2)

    assert delta_log.tombstones(table) == 3
    assert delta_log.live_data_files(table) == {"a", "b"}


def test_a_v2_checkpoint_counts_its_sidecars(tmp_path):
    table, log = table_with_log(tmp_path)
    (log / delta_log.SIDECARS).mkdir()
    write_parquet(log / delta_log.SIDECARS / "one.parquet", checkpoint_rows(["a", "b"], ["x"], others=0))
    write_parquet(log / delta_log.SIDECARS / "two.parquet", checkpoint_rows(["c"], ["y", "z", "w"], others=0))
    top = f"{30:020d}.checkpoint.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json"
    (log / top).write_text("".join(json.dumps(line) + "\n" for line in (
        {"checkpointMetadata": {"version": 30}}, {"protocol": {}}, {"metaData": {}},
        {"sidecar": {"path": "one.parquet"}}, {"sidecar": {"path": "two.parquet"}})))
    last_checkpoint(log, version=30, size=9, v2Checkpoint={"path": top, "sidecarFiles": []})

    assert delta_log.tombstones(table) == 4
    assert delta_log.live_data_files(table) == {"a", "b", "c"}


def test_a_v2_parquet_checkpoint_last_checkpoint_does_not_describe(tmp_path):
    table, log = table_with_log(tmp_path)
    (log / delta_log.SIDECARS).mkdir()
    write_parquet(log / delta_log.SIDECARS / "one.parquet", checkpoint_rows(["a"], ["x", "y"], others=0))
    write_parquet(log / f"{40:020d}.checkpoint.0b6a0bd4-3c43-4a8e-9a41-4b1d7e2c1f00.parquet",
                  [{}, {"sidecar": "one.parquet"}, {"remove": "inline"}], actions=("add", "remove", "sidecar"))
    last_checkpoint(log, version=40, size=5)

    assert delta_log.tombstones(table) == 3
    assert delta_log.live_data_files(table) == {"a"}
