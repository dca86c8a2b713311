"""Offsets entries of both of Spark's versions read alike (jvm/checkpoint_log.py), and a checkpoint
from before sources had names converted in place (lifecycle/checkpoint_names.py), on local folders
written as Spark 4.1 writes them: no JVM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbt_spark_streaming.errors import StreamingModelError
from dbt_spark_streaming.jvm.checkpoint_log import (
    SOURCE_NAMING, input_key, names_sources, record_shuffle_partitions, source_offsets,
)
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.lifecycle.checkpoint_names import adopt_names

METADATA = {"batchWatermarkMs": 5, "batchTimestampMs": 1, "conf": {"spark.sql.shuffle.partitions": "4"}}
FILES = {"logOffset": 3}
TABLE = {"sourceVersion": 1, "reservoirId": "t1", "reservoirVersion": 9, "index": -1, "isStartingVersion": False}


def test_both_versions_give_each_sources_offset_by_its_key():
    v1 = ["v1", json.dumps(METADATA), json.dumps(FILES), "-"]
    v2 = ["v2", json.dumps(METADATA), f"readings:{json.dumps(TABLE)}", f"files:{json.dumps(FILES)}"]
    assert source_offsets(v1) == {"0": json.dumps(FILES), "1": "-"} and not names_sources(v1)
    assert source_offsets(v2) == {"readings": json.dumps(TABLE), "files": json.dumps(FILES)} and names_sources(v2)
    assert input_key(1, "readings", named=True) == "readings" and input_key(1, "readings", named=False) == "1"


def spark_41_checkpoint(root: Path, batches: int = 3) -> Path:
    """Two sources, files then a Delta table, numbered as Spark 4.1 numbers them."""
    for batch in range(batches):
        offsets = [json.dumps({"logOffset": batch}), json.dumps({**TABLE, "reservoirVersion": batch + 1})]
        (root / "offsets").mkdir(parents=True, exist_ok=True)
        (root / "offsets" / str(batch)).write_text("\n".join(["v1", json.dumps(METADATA), *offsets]))
        (root / "commits").mkdir(exist_ok=True)
        (root / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":5}')
    (root / "sources" / "0").mkdir(parents=True)
    (root / "sources" / "0" / "0").write_text('v1\n{"path":"file:/landing/a.json","timestamp":1,"batchId":0}')
    return root


INPUTS = [StreamingInput("json", "/landing", "landing__files"), StreamingInput("delta", "/t", "readings")]


def test_a_checkpoint_of_spark_41_gets_its_querys_names_in_place(tmp_path):
    checkpoint = spark_41_checkpoint(tmp_path / "cp")
    assert adopt_names(None, "m", str(checkpoint), INPUTS)
    for batch in range(3):
        lines = (checkpoint / "offsets" / str(batch)).read_text().split("\n")
        assert names_sources(lines)
        assert json.loads(source_offsets(lines)["landing__files"]) == {"logOffset": batch}
        assert json.loads(source_offsets(lines)["readings"])["reservoirVersion"] == batch + 1
        metadata = json.loads(lines[1])
        assert metadata["conf"][SOURCE_NAMING] == "true"  # Spark restores it from the checkpoint
        assert metadata["batchWatermarkMs"] == 5 and metadata["conf"]["spark.sql.shuffle.partitions"] == "4"
    assert sorted(p.name for p in (checkpoint / "sources").iterdir()) == ["landing__files"]
    assert (checkpoint / "commits" / "2").read_text() == 'v1\n{"nextBatchWatermarkMs":5}'
    assert not adopt_names(None, "m", str(checkpoint), INPUTS)  # once


def test_a_conversion_cut_short_is_finished_by_the_next(tmp_path):
    checkpoint = spark_41_checkpoint(tmp_path / "cp")
    (checkpoint / "sources" / "0").rename(checkpoint / "sources" / "landing__files")  # step 1 done, then killed
    assert adopt_names(None, "m", str(checkpoint), INPUTS)
    assert all(names_sources((checkpoint / "offsets" / str(b)).read_text().split("\n")) for b in range(3))
    assert (checkpoint / "sources" / "landing__files" / "0").exists()


def test_inputs_added_together_with_the_upgrade_are_refused_with_the_way_forward(tmp_path):
    checkpoint = spark_41_checkpoint(tmp_path / "cp")
    with pytest.raises(StreamingModelError) as refused:
        adopt_names(None, "m", str(checkpoint), [*INPUTS, StreamingInput("json", "/more", "more")])
    assert "Run the model once with its previous inputs" in str(refused.value)
    assert not names_sources((checkpoint / "offsets" / "2").read_text().split("\n"))  # untouched


def test_unnamed_inputs_or_no_checkpoint_convert_nothing(tmp_path):
    checkpoint = spark_41_checkpoint(tmp_path / "cp")
    assert not adopt_names(None, "m", str(checkpoint), [StreamingInput("json", "/landing")] * 2)
    assert not adopt_names(None, "m", str(tmp_path / "none"), INPUTS)


def test_named_entries_get_the_states_shuffle_partitions_spark_42_leaves_out(tmp_path):
    checkpoint = tmp_path / "cp"
    for batch in range(2):
        (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
        written = {"batchWatermarkMs": 0, "batchTimestampMs": 1, "conf": {SOURCE_NAMING: "true"}, "sourceMetadataInfo": {}}
        (checkpoint / "offsets" / str(batch)).write_text(
            "\n".join(["v2", json.dumps(written), f"readings:{json.dumps(TABLE)}"]))
    for partition in range(3):
        (checkpoint / "state" / "0" / str(partition)).mkdir(parents=True)
    assert record_shuffle_partitions(None, str(checkpoint)) == 2
    for batch in range(2):
        lines = (checkpoint / "offsets" / str(batch)).read_text().split("\n")
        assert json.loads(lines[1])["conf"]["spark.sql.shuffle.partitions"] == "3"
        assert source_offsets(lines) == {"readings": json.dumps(TABLE)}
    assert record_shuffle_partitions(None, str(checkpoint)) == 0
