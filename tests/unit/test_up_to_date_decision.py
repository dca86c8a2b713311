"""The up-to-date decision (lifecycle/up_to_date.py) on checkpoints and inputs written as Spark and
Delta write them, in local folders: no JVM (local paths are read without one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbt_spark_streaming.jvm import hadoop_fs, plans
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.lifecycle import up_to_date
from dbt_spark_streaming.jvm.checkpoint_log import files_seen

METADATA = {"batchWatermarkMs": 0, "batchTimestampMs": 1, "conf": {}}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def delta_table(root: Path, latest: int, table_id: str = "t1") -> str:
    write(root / "_delta_log" / f"{0:020d}.json", "\n".join([
        json.dumps({"commitInfo": {}}), json.dumps({"metaData": {"id": table_id}})]))
    for version in range(1, latest + 1):
        write(root / "_delta_log" / f"{version:020d}.json", "{}")
    write(root / "_delta_log" / f"{latest:020d}.crc", "{}")
    return f"file:{root}"


def delta_offset(version: int, index: int = -1, starting: bool = False) -> dict:
    return {"sourceVersion": 1, "reservoirId": "t1", "reservoirVersion": version, "index": index,
            "isStartingVersion": starting}


def file_log(checkpoint: Path, source: int | str, batch: int, paths: list[str], name: str | None = None) -> None:
    lines = ["v1", *(json.dumps({"path": path, "timestamp": 1, "batchId": batch}) for path in paths)]
    write(checkpoint / "sources" / str(source) / (name or str(batch)), "\n".join(lines))


def checkpoint_at(checkpoint: Path, batch: int, offsets: list, committed: bool = True,
                  metadata: dict = METADATA, next_watermark: int = 0) -> str:
    lines = ["v1", json.dumps(metadata), *(json.dumps(o) if o is not None else "-" for o in offsets)]
    write(checkpoint / "offsets" / str(batch), "\n".join(lines))
    if committed:
        write(checkpoint / "commits" / str(batch), "v1\n" + json.dumps({"nextBatchWatermarkMs": next_watermark}))
    return str(checkpoint)


@pytest.fixture
def inputs(monkeypatch):
    """The query's inputs, as the plan would give them."""
    found: list[StreamingInput] = []
    monkeypatch.setattr(plans, "streaming_inputs", lambda frame: found)
    return found


def test_a_delta_input_read_through_its_latest_version_is_up_to_date(tmp_path, inputs):
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "table", latest=3)))
    checkpoint = checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)])
    decided = up_to_date.nothing_new(None, checkpoint, None)
    assert decided is not None and decided.batch_id == 5


@pytest.mark.parametrize("offset", [
    delta_offset(3),                      # version 3 not read yet
    delta_offset(3, index=7),             # inside version 3
    delta_offset(4, starting=True),       # inside the initial snapshot
    {"logOffset": 1},                     # not a Delta offset at all
], ids=["new-version", "inside-a-version", "initial-snapshot", "other-kind"])
def test_a_delta_input_with_anything_left_starts_the_query(tmp_path, inputs, offset):
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "table", latest=3)))
    assert up_to_date.nothing_new(None, checkpoint_at(tmp_path / "cp", 5, [offset]), None) is None


def test_a_batch_planned_and_not_committed_starts_the_query(tmp_path, inputs):
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "table", latest=4)))
    checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)])
    checkpoint = checkpoint_at(tmp_path / "cp", 6, [delta_offset(5)], committed=False)
    assert up_to_date.nothing_new(None, checkpoint, None) is None


def test_an_empty_batch_planned_after_a_committed_one_waits_for_new_input(tmp_path, inputs):
    """The batch planned past an initial snapshot (its offsets the last committed batch's) reads
    nothing: up to date since the committed batch, until an input has news or the committed
    batch moved a stateful query's watermark on."""
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "table", latest=3)))
    checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)])
    checkpoint = checkpoint_at(tmp_path / "cp", 6, [delta_offset(4)], committed=False)
    assert up_to_date.nothing_new(None, checkpoint, None).batch_id == 5

    delta_table(tmp_path / "table", latest=4)  # a new version: the query starts
    assert up_to_date.nothing_new(None, checkpoint, None) is None
    delta_table(tmp_path / "table2", latest=3)
    inputs[0] = StreamingInput("delta", f"file:{tmp_path / 'table2'}")
    checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)], next_watermark=60_000)
    (tmp_path / "cp" / "state" / "0").mkdir(parents=True)
    assert up_to_date.nothing_new(None, checkpoint, None) is None  # windows to emit


def test_a_moved_watermark_starts_a_stateful_query_only(tmp_path, inputs):
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "table", latest=3)))
    checkpoint = checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)], next_watermark=60_000)
    assert up_to_date.nothing_new(None, checkpoint, None) is not None  # no state: nothing to emit
    (tmp_path / "cp" / "state" / "0").mkdir(parents=True)
    assert up_to_date.nothing_new(None, checkpoint, None) is None


def test_a_file_input_is_up_to_date_while_every_file_in_its_folder_is_in_its_log(tmp_path, inputs):
    folder = tmp_path / "landing"
    first, second = write(folder / "a.json", "{}"), write(folder / "day=1" / "b.json", "{}")
    write(folder / "_SUCCESS", ""), write(folder / ".a.json.crc", ""), write(folder / "c.json._COPYING_", "")
    inputs.append(StreamingInput("json", str(folder)))
    checkpoint = tmp_path / "cp"
    file_log(checkpoint, 0, 0, [f"file://{first}"])
    file_log(checkpoint, 0, 1, [f"file://{second}"])
    assert up_to_date.nothing_new(None, checkpoint_at(checkpoint, 1, [{"logOffset": 1}]), None) is not None
    write(folder / "d.json", "{}")
    assert up_to_date.nothing_new(None, str(checkpoint), None) is None


def test_a_lines_count_unlike_the_plans_inputs_starts_the_query(tmp_path, inputs):
    inputs += [StreamingInput("delta", delta_table(tmp_path / "t", latest=3)), StreamingInput("kafka", None)]
    assert up_to_date.nothing_new(None, checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)]), None) is None


def test_kafka_and_a_delta_input_that_is_another_table_or_gone_start_the_query(tmp_path, inputs):
    inputs.append(StreamingInput("kafka", None))
    assert up_to_date.nothing_new(None, checkpoint_at(tmp_path / "k", 5, [{"t": {"0": 5}}]), None) is None
    inputs[:] = [StreamingInput("delta", delta_table(tmp_path / "a", 3)),
                 StreamingInput("delta", delta_table(tmp_path / "b", 3, table_id="t2"))]
    both = [delta_offset(4), {**delta_offset(4), "reservoirId": "t2"}]
    assert up_to_date.nothing_new(None, checkpoint_at(tmp_path / "d", 5, both), None) is not None
    inputs.reverse()  # each line held against the other table: ids differ
    assert up_to_date.nothing_new(None, str(tmp_path / "d"), None) is None
    inputs[:] = [StreamingInput("delta", delta_table(tmp_path / "made_again", 1, table_id="new"))]
    assert up_to_date.nothing_new(None, checkpoint_at(tmp_path / "e", 5, [delta_offset(4)]), None) is None
    inputs[:] = [StreamingInput("delta", f"file:{tmp_path / 'gone'}")]
    assert up_to_date.nothing_new(None, str(tmp_path / "e"), None) is None


def test_the_file_log_is_read_from_its_last_compaction_on(tmp_path):
    checkpoint = tmp_path / "cp"
    file_log(checkpoint, 2, 9, ["file:///x/0", "file:///x/9"], name="9.compact")
    file_log(checkpoint, 2, 3, ["file:///x/3-deleted-by-compaction"])
    file_log(checkpoint, 2, 10, ["file:///x/10"])
    file_log(checkpoint, 2, 11, ["file:///x/11-not-yet"])
    assert files_seen(None, str(checkpoint), 2, 10) == ["file:///x/0", "file:///x/9", "file:///x/10"]


def test_every_spelling_of_a_local_file_is_the_same_file():
    assert hadoop_fs.file_key("file:///x/a b.json") == hadoop_fs.file_key("file:/x/a%20b.json")
    assert hadoop_fs.file_key("s3a://bucket/x") != hadoop_fs.file_key("file:/x")
    assert hadoop_fs.local_path("s3a://bucket/x") is None and hadoop_fs.local_path("/x") == "/x"


def test_a_listed_location_s_path_is_read_as_hadoop_spells_it_unescaped():
    assert hadoop_fs.path_of_listed("s3a://bucket/lake/x/a b#1?.json") == "/lake/x/a b#1?.json"
    assert hadoop_fs.path_of_listed("s3a://bucket") == "/"
    assert hadoop_fs.path_of_listed("file:/tmp/x y") == "/tmp/x y"


def test_a_delta_input_with_a_version_unread_starts_the_query_without_asking_its_table_id(
    tmp_path, inputs, monkeypatch
):
    # Once the log's first commit is trimmed, the id comes from the table's state: a Delta
    # snapshot (its log listed again) that a served run with news need not pay.
    def not_needed(spark, path):
        raise AssertionError("the table's id read for an input with news")

    inputs.append(StreamingInput("delta", delta_table(tmp_path / "t", latest=5)))
    monkeypatch.setattr(up_to_date.delta_log, "table_id", not_needed)
    assert up_to_date.nothing_new(None, checkpoint_at(tmp_path / "cp", 5, [delta_offset(4)]), None) is None


def named_checkpoint_at(checkpoint: Path, batch: int, offsets: dict) -> str:
    """An offsets entry of Spark's version 2: a line `<name>:<offset>` per source."""
    lines = ["v2", json.dumps(METADATA), *(f"{name}:{json.dumps(o)}" for name, o in offsets.items())]
    write(checkpoint / "offsets" / str(batch), "\n".join(lines))
    write(checkpoint / "commits" / str(batch), "v1\n" + json.dumps({"nextBatchWatermarkMs": 0}))
    return str(checkpoint)


def test_named_sources_are_held_against_their_own_offsets_in_any_order(tmp_path, inputs):
    folder = tmp_path / "landing"
    landed = write(folder / "a.json", "{}")
    file_log(tmp_path / "cp", "files", 0, [f"file://{landed}"])  # the log in sources/<name>
    inputs += [StreamingInput("delta", delta_table(tmp_path / "t", latest=3), "readings"),
               StreamingInput("json", str(folder), "files")]
    checkpoint = named_checkpoint_at(tmp_path / "cp", 2, {"files": {"logOffset": 0}, "readings": delta_offset(4)})
    assert up_to_date.nothing_new(None, checkpoint, None) is not None
    inputs.reverse()
    assert up_to_date.nothing_new(None, checkpoint, None) is not None


def test_a_named_source_removed_leaves_the_others_up_to_date_and_one_added_starts_the_query(tmp_path, inputs):
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "t", latest=3), "readings"))
    gone = {"logOffset": 7}  # a source the query no longer reads
    checkpoint = named_checkpoint_at(tmp_path / "cp", 2, {"old_files": gone, "readings": delta_offset(4)})
    assert up_to_date.nothing_new(None, checkpoint, None) is not None
    inputs.append(StreamingInput("delta", delta_table(tmp_path / "u", latest=1, table_id="t1"), "added"))
    assert up_to_date.nothing_new(None, checkpoint, None) is None  # all of "added" is still to read
