"""The dataflow serving's parts that need no JVM: the on_new_data trigger, target_lag, the input
watches the scheduler polls, how `service status` says a model's lag, and a model that keeps
failing set aside while the others serve on."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from types import SimpleNamespace

import pytest
from dict_conf import DictConf

from dbt_spark_streaming.config.common import ModelConfigError
from dbt_spark_streaming.config.maintenance import Maintenance
from dbt_spark_streaming.lifecycle.maintenance import Maintained
from dbt_spark_streaming.serve import upkeep as served_upkeep
from dbt_spark_streaming.config.model import read_model_config
from dbt_spark_streaming.config.triggers import Trigger
from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.serve import backoff, input_watches
from dbt_spark_streaming.serve.dataflow import (
    NO_TARGET_SLACK_SECONDS, Dataflow, RunResult, ScheduledModel, polling_interval, runs_at_once,
    served_conf,
)
from dbt_spark_streaming.commands.service import lag_said


@pytest.fixture(autouse=True)
def lakehouse(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path))
    return tmp_path


def model(**config) -> dict:
    node = {"name": "counts", "alias": "counts", "schema": "gold", "unique_id": "model.p.counts",
            "resource_type": "model", "sources": [], "config": {"materialized": "streaming_table", **config}}
    unrendered = config.pop("unrendered", None)
    if unrendered:
        node["unrendered_config"] = unrendered
        node["config"].pop("unrendered", None)
    return node


def read(node: dict, run_vars=None):
    return read_model_config(node, {"nodes": {node["unique_id"]: node}, "sources": {}}, run_vars or {})


def test_on_new_data_is_served_and_each_run_is_available_now():
    trigger = Trigger.parse("on_new_data")
    assert trigger == Trigger.parse({"on_new_data": True})
    assert trigger.on_new_data and not trigger.runs_until_caught_up
    assert trigger.writer_kwargs() == {"availableNow": True}
    assert trigger.catch_up().kind == "available_now"
    assert read(model(), {"stream_trigger": "on_new_data"}).trigger.on_new_data


def test_target_lag_is_a_duration_and_dbts_freshness_is_not_taken_for_it():
    assert read(model(target_lag="5 seconds")).target_lag_seconds == 5
    assert read(model()).target_lag_seconds is None
    with pytest.raises(ModelConfigError, match="target_lag 'soon' is not a duration"):
        read(model(target_lag="soon"))
    # dbt drops a `freshness` without build_after from the config; what the user wrote is refused
    with pytest.raises(ModelConfigError, match="write target_lag='5 seconds' instead"):
        read(model(unrendered={"freshness": "5 seconds"}))
    read(model(unrendered={"freshness": {"build_after": {"count": 1, "period": "hour"}}}))


def test_a_misspelt_target_lag_names_it():
    with pytest.raises(ModelConfigError, match="did you mean 'target_lag'"):
        read(model(max_lag="5 seconds"))


def test_only_inputs_with_a_path_and_a_known_format_are_watched():
    assert input_watches.watchable(StreamingInput("json", "/landing/recordings"))
    assert input_watches.watchable(StreamingInput("delta", "file:/wh/bronze.db/t"))
    assert not input_watches.watchable(StreamingInput("kafka", None))
    assert not input_watches.watchable(StreamingInput("json", "/landing/*/recordings"))
    assert polling_interval(None) == "1 second" and polling_interval(1.0) == "500 milliseconds"


def test_a_folder_watch_sees_a_file_landing_in_a_new_or_old_subfolder(tmp_path):
    root = tmp_path / "landing"
    watch = input_watches.watch_for(StreamingInput("json", str(root)), remote=None)
    assert watch.changed_since_last() is None  # not there yet
    (root / "day=1").mkdir(parents=True)
    assert watch.changed_since_last() is not None
    assert watch.changed_since_last() is None
    _later(root / "day=1" / "a.json")
    assert watch.changed_since_last() is not None
    assert watch.changed_since_last() is None
    (root / "day=2").mkdir()
    assert watch.changed_since_last() is not None
    _later(root / "day=2" / "b.json")
    assert watch.changed_since_last() is not None


def test_a_delta_watch_sees_each_next_commit_and_a_table_made_again(tmp_path):
    log = tmp_path / "table" / "_delta_log"
    log.mkdir(parents=True)
    (log / f"{0:020d}.json").write_text("{}")
    watch = input_watches.watch_for(StreamingInput("delta", f"file:{tmp_path / 'table'}"), remote=None)
    assert watch.changed_since_last() is None
    (log / f"{1:020d}.json").write_text("{}")
    (log / f"{2:020d}.json").write_text("{}")
    assert watch.changed_since_last() is not None
    assert watch.changed_since_last() is None
    (log / f"{2:020d}.checkpoint.parquet").write_text("")  # not a commit
    assert watch.changed_since_last() is None
    for name in os.listdir(log):
        os.remove(log / name)
    os.rmdir(log)
    assert watch.changed_since_last() is None
    log.mkdir()
    (log / f"{0:020d}.json").write_text("{}")
    assert watch.changed_since_last() is not None


def test_a_polled_watch_reads_no_more_often_than_asked_and_counts_an_error_as_news():
    values = iter([1, 1, RuntimeError("gone"), 2])

    def read():
        value = next(values)
        if isinstance(value, Exception):
            raise value
        return value

    watch = input_watches.PolledWatch(read, every=0)
    assert watch.changed_since_last() is None
    assert watch.changed_since_last() is not None  # unreadable
    assert watch.changed_since_last() is not None  # readable again, and changed
    slow = input_watches.PolledWatch(lambda: time.time(), every=60)
    assert slow.changed_since_last() is None


def test_a_remote_delta_input_is_listed_once_then_probed_for_its_next_commit_only():
    commits, listings, probes = {0, 1}, [], []

    def listed():
        listings.append(1)
        return max(commits)

    def is_commit(version):
        probes.append(version)
        return version in commits

    latest = input_watches.NextCommits(listed, is_commit)
    assert latest() == 1 and probes == [2]
    assert latest() == 1 and probes == [2, 2]  # nothing new: one probe, no listing
    commits.update({2, 3})
    assert latest() == 3 and probes[-3:] == [2, 3, 4]
    assert len(listings) == 1


def test_a_remote_input_is_polled_every_5_s_unless_every_reader_may_lag_longer():
    assert input_watches.remote_poll_seconds([None]) == input_watches.REMOTE_POLL_SECONDS
    assert input_watches.remote_poll_seconds([600.0, None]) == input_watches.REMOTE_POLL_SECONDS
    assert input_watches.remote_poll_seconds([8.0]) == input_watches.REMOTE_POLL_SECONDS
    assert input_watches.remote_poll_seconds([600.0, 120.0]) == 30.0
    assert input_watches.remote_poll_seconds([86_400.0]) == input_watches.REMOTE_POLL_MAX_SECONDS


def test_a_models_lag_runs_from_the_oldest_change_it_has_not_finished_taking():
    served = ScheduledModel(write=None, start=None, inputs=(), output=None, target_lag=5)
    assert served.lag(now=100.0) == 0.0
    served.mark_pending(90.0)
    served.mark_pending(95.0)
    assert served.lag(now=100.0) == 10.0
    served.running_since, served.pending_since = served.pending_since, None
    served.mark_pending(99.0)
    assert served.lag(now=100.0) == 10.0


def test_status_says_lag_against_target():
    assert lag_said({"lag_seconds": None}) == ""
    assert lag_said({"lag_seconds": 0.0, "last_run_lag_seconds": 1.84, "target_lag_seconds": 5.0}) == \
        ", lag 0.0 s (last run 1.8 s after its input; target 5 s: met)"
    assert "target 5 s: MISSED" in lag_said(
        {"lag_seconds": 7.5, "last_run_lag_seconds": 2.0, "target_lag_seconds": 5.0})


def _later(path) -> None:
    """A file created a little later, so that its folder's time moves on any file system."""
    time.sleep(0.01)
    path.write_text("{}\n")


def _served(name: str, reads: tuple = (), target_lag=None, tmp=None, maintained=False) -> ScheduledModel:
    config = SimpleNamespace(model=name, maintenance=Maintenance(enabled=maintained), checkpoint=f"{tmp}/cp/{name}")
    write = SimpleNamespace(model=name, query_name=f"s.{name}", checkpoint=f"{tmp}/cp/{name}",
                            config=config, target_table=f"s.{name}")
    inputs = tuple(StreamingInput("delta", f"file:{tmp}/{read}") for read in reads)
    return ScheduledModel(write, start=None, inputs=inputs, output=f"file:{tmp}/{name}", target_lag=target_lag)


def test_a_target_lag_gives_priority_to_its_model_and_to_what_feeds_it(tmp_path):
    landing = _served("bronze", tmp=tmp_path)
    landing.inputs = (StreamingInput("json", str(tmp_path / "landing")),)
    models = [landing, _served("silver", ("bronze",), tmp=tmp_path),
              _served("windows", ("silver",), tmp=tmp_path),
              _served("gold", ("silver",), target_lag=5.0, tmp=tmp_path)]
    flow = Dataflow(SimpleNamespace(conf=DictConf()), models, log=print, wake=threading.Event())
    try:
        assert flow._slack == {"s.bronze": 5.0, "s.silver": 5.0, "s.gold": 5.0, "s.windows": NO_TARGET_SLACK_SECONDS}
        models[2].mark_pending(100.0)  # waiting longer, but without a target
        models[3].mark_pending(110.0)
        assert sorted(flow._startable(), key=flow._deadline)[0].name == "s.gold"
        assert flow.spark.conf.get("spark.sql.codegen.wholeStage") == "false"  # served runs interpret
    finally:
        flow.stop(lambda queries: None)
    assert flow.spark.conf.get("spark.sql.codegen.wholeStage") is None  # as before serving


def test_the_service_says_which_model_misses_its_target_and_when_it_meets_it_again(tmp_path):
    said = []
    gold = _served("gold", target_lag=5.0, tmp=tmp_path)
    flow = Dataflow(SimpleNamespace(conf=DictConf()), [gold], log=said.append, wake=threading.Event())
    try:
        gold.mark_pending(100.0)
        flow._say_missed_targets(now=103.0)
        assert said == []
        flow._say_missed_targets(now=107.5)
        assert said == ["gold: 7.5 s behind its inputs, over its target_lag of 5 s; its run is starting."]
        flow._say_missed_targets(now=108.0)
        assert len(said) == 1  # not again at once
        gold.pending_since, gold.last_lag = None, 2.0
        flow._say_missed_targets(now=109.0)
        assert said[-1].startswith("gold: within its target_lag of 5 s again")
    finally:
        flow.stop(lambda queries: None)


def test_a_progress_row_of_a_served_batch_has_its_lag_and_target():
    from dbt_spark_streaming.progress.table import COLUMNS, progress_row
    batch = {"id": "q", "runId": "r", "name": "gold.device_counts", "batchId": 3, "numInputRows": 10,
             "timestamp": "2026-01-01T00:00:00.000Z", "durationMs": {"triggerExecution": 900},
             "sources": [], "sink": {}, "stateOperators": []}
    row = dict(zip([column for column, _kind in COLUMNS], progress_row(batch, (2.345678, 5.0))))
    assert (row["lag_seconds"], row["target_lag_seconds"]) == (2.346, 5.0)
    row = dict(zip([column for column, _kind in COLUMNS], progress_row(batch)))
    assert (row["lag_seconds"], row["target_lag_seconds"]) == (None, None)


def _fail(flow: Dataflow, model: ScheduledModel, times: int) -> None:
    """`times` runs of `model` that each raise, as the scheduler hears of them."""
    for _ in range(times):
        failed = Future()
        failed.set_exception(RuntimeError("injected failure"))
        model.running = failed
        flow._finished(model)


def test_a_model_failing_again_and_again_is_set_aside_and_the_others_serve_on(tmp_path):
    said = []
    models = [_served("bronze", tmp=tmp_path), _served("silver", ("bronze",), tmp=tmp_path),
              _served("other", tmp=tmp_path)]
    bronze, silver, other = models
    flow = Dataflow(SimpleNamespace(conf=DictConf()), models, log=said.append, wake=threading.Event())
    try:
        _fail(flow, bronze, backoff.MAX_FAILURES_IN_A_ROW - 1)
        assert not bronze.set_aside and bronze.state.startswith("retrying after a failure in")
        assert said[-1].endswith(f"(failure 4 of {backoff.MAX_FAILURES_IN_A_ROW} in a row before it is set aside).")

        _fail(flow, bronze, 1)  # no exception: serving goes on

        assert bronze.set_aside and bronze.state.startswith("FAILED 5 times in a row, set aside; tried again in 30")
        assert bronze.retry_at - time.monotonic() > backoff.MAX_BACKOFF_SECONDS
        assert "set aside: the other models keep serving" in said[-1] and "injected failure" in said[-1]
        assert silver.state == "waiting on bronze, which failed"
        assert other.state == "waiting for new data" and not other.set_aside

        done = Future()
        done.set_result(RunResult(ran=True))
        bronze.running = done
        flow._finished(bronze)  # the retry that completes: bronze is back, silver waits no more
        assert not bronze.set_aside and silver.state == "waiting for new data"
    finally:
        flow.stop(lambda queries: None)


def test_serving_stops_only_when_every_model_is_set_aside(tmp_path):
    from dbt_spark_streaming.errors import StreamingModelError
    from dbt_spark_streaming.run.serving import _refuse_if_nothing_serves

    models = [_served("bronze", tmp=tmp_path), _served("other", tmp=tmp_path)]
    flow = Dataflow(SimpleNamespace(conf=DictConf()), models, log=lambda line: None, wake=threading.Event())
    try:
        _fail(flow, models[0], backoff.MAX_FAILURES_IN_A_ROW)
        _refuse_if_nothing_serves([], flow)  # other still serves
        _fail(flow, models[1], backoff.MAX_FAILURES_IN_A_ROW)
        with pytest.raises(StreamingModelError, match="Every served query failed 5 times in a row, so serving stops: "
                                                      "s.bronze: injected failure; s.other: injected failure"):
            _refuse_if_nothing_serves([], flow)
    finally:
        flow.stop(lambda queries: None)


def test_the_pause_doubles_then_a_set_aside_model_is_tried_every_few_minutes():
    assert [backoff.pause_after(n) for n in range(1, 8)] == [1, 2, 4, 8, 300, 300, 300]


def test_a_served_tables_maintenance_is_due_every_few_runs_and_every_few_minutes(tmp_path, monkeypatch):
    bronze = _served("bronze", tmp=tmp_path, maintained=True)
    flow = Dataflow(SimpleNamespace(conf=DictConf()), [bronze], log=print, wake=threading.Event())
    try:
        schedule = bronze.upkeep
        assert schedule.check_every_runs == served_upkeep.COMPACT_AT_FILES // 4
        for _ in range(schedule.check_every_runs - 1):
            schedule.ran()
        assert not schedule.due(100.0)
        schedule.ran()
        assert schedule.due(100.0) and schedule.deadline() == 100.0 + served_upkeep.SLACK_SECONDS
        assert schedule.started() is False  # a compaction check, no VACUUM yet
        assert not schedule.due(200.0)
        schedule.vacuum_at = time.monotonic() - 1
        assert schedule.due(200.0) and schedule.started() is True
        assert schedule.vacuum_at - time.monotonic() > served_upkeep.VACUUM_EVERY_SECONDS - 5
        schedule.vacuum_at, schedule.written_at = time.monotonic() - 1, time.monotonic() - 2 * 3600
        assert not schedule.due(300.0)  # unwritten for longer than it keeps files: nothing to do
        monkeypatch.setenv(served_upkeep.VACUUM_EVERY_VARIABLE, "soon")
        with pytest.raises(Exception, match="STREAM_SERVE_VACUUM_EVERY_SECONDS is 'soon'; give how many seconds"):
            served_upkeep.vacuum_every_seconds()
        monkeypatch.setenv("STREAM_SERVE_RUNS_AT_ONCE", "0")
        with pytest.raises(Exception, match="STREAM_SERVE_RUNS_AT_ONCE is '0'; give a whole number of queries"):
            runs_at_once()
        assert not _served("silver", tmp=tmp_path).upkeep  # maintenance: false
    finally:
        flow.stop(lambda queries: None)


def test_maintenance_takes_a_run_slot_by_deadline_and_never_beside_its_own_models_run(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAM_SERVE_RUNS_AT_ONCE", "1")
    said = []
    bronze = _served("bronze", tmp=tmp_path, maintained=True)
    silver = _served("silver", ("bronze",), tmp=tmp_path, maintained=True)
    flow = Dataflow(SimpleNamespace(conf=DictConf()), [bronze, silver], log=said.append, wake=threading.Event())
    passes = []
    release = threading.Event()

    def maintain(model, vacuum):
        passes.append((model.name, vacuum))
        release.wait(10)
        return Maintained(model.write.model, compacted=(50, 1))

    flow._pool.shutdown()
    flow._pool = ThreadPoolExecutor(max_workers=1)  # its threads start no Spark session here
    monkeypatch.setattr(flow, "_maintain", maintain)
    monkeypatch.setattr(flow, "_run", lambda model: release.wait(10) or RunResult(ran=True))
    try:
        bronze.upkeep.runs_since = bronze.upkeep.check_every_runs
        bronze.upkeep.due_since = time.time() - 30  # due before the landing below
        bronze.mark_pending(time.time())
        silver.mark_pending(time.time())
        flow.step()
        assert passes == [("s.bronze", False)] and bronze.state == "maintaining its table"
        assert bronze.running is None and silver.running is None  # one slot: the others wait
        release.set()
        bronze.maintaining.result(5)
        flow.step()
        assert said == ["Maintained bronze: compacted 50 files into 1"]
        assert bronze.running is not None or silver.running is not None
        bronze.upkeep.runs_since = bronze.upkeep.check_every_runs  # due again, but bronze runs
        if bronze.running is not None:
            assert bronze not in flow._upkeep_due(time.time())
    finally:
        release.set()
        flow.stop(lambda queries: None)


def test_served_runs_read_a_small_batch_as_one_partition_unless_the_profile_says_otherwise():
    conf = DictConf()
    assert served_conf(SimpleNamespace(conf=conf))["spark.sql.files.minPartitionNum"] == "1"
    conf.set("spark.sql.files.minPartitionNum", "8")  # the profile's
    assert "spark.sql.files.minPartitionNum" not in served_conf(SimpleNamespace(conf=conf))
