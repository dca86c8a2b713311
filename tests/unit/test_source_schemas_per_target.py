"""Each dbt target keeps the schemas inferred for file sources, and their last check, as its own;
a target's store begins as a copy of the one every target shared before."""

from __future__ import annotations

from dbt_spark_streaming.lakehouse import Lakehouse, use_target
from dbt_spark_streaming.sources.schemas import SchemaStore


def lakehouse_of(root, target: str = "") -> Lakehouse:
    environ = {"LAKEHOUSE_DIR": str(root)}
    if target:
        use_target(target, environ)
    return Lakehouse.from_env(environ)


def test_each_target_has_its_own_folder_and_without_one_the_shared_folder_is_used(tmp_path):
    prod, dev = lakehouse_of(tmp_path, "default"), lakehouse_of(tmp_path, "dev_alice")
    assert prod.source_schemas("landing.recordings").endswith("/checkpoints/_source_schemas/default/landing.recordings")
    assert dev.source_schemas("landing.recordings").endswith("/_source_schemas/dev_alice/landing.recordings")
    assert lakehouse_of(tmp_path).source_schemas("landing.recordings") == prod.shared_source_schemas(
        "landing.recordings")


def test_a_targets_store_begins_as_a_copy_of_the_shared_one_and_then_moves_alone(tmp_path):
    lakehouse = lakehouse_of(tmp_path, "default")
    shared = tmp_path / "checkpoints" / "_source_schemas" / "landing.recordings"
    shared.mkdir(parents=True)
    (shared / "0.json").write_text('{"schema": "as the project first read it"}')
    (shared / "checked_until.json").write_text("100")

    store = SchemaStore.of_target(None, lakehouse.source_schemas("landing.recordings"),
                                  lakehouse.shared_source_schemas("landing.recordings"))
    own = tmp_path / "checkpoints" / "_source_schemas" / "default" / "landing.recordings"
    assert store.folder == str(own)
    assert (own / "0.json").read_text() == '{"schema": "as the project first read it"}'
    assert (own / "checked_until.json").read_text() == "100"

    (own / "checked_until.json").write_text("200")  # this target's later check
    SchemaStore.of_target(None, str(own), str(shared))  # not copied again
    assert (own / "checked_until.json").read_text() == "200"
    assert (shared / "checked_until.json").read_text() == "100"


def test_a_target_begins_with_nothing_when_nothing_was_shared(tmp_path):
    lakehouse = lakehouse_of(tmp_path, "ci")
    store = SchemaStore.of_target(None, lakehouse.source_schemas("s.t"), lakehouse.shared_source_schemas("s.t"))
    assert store.latest() is None
