"""The warm driver's parts that need no JVM: its file, when a command refuses to attach, a driver
that does not answer, and the per-model locks attached commands and the service share."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from dbt_spark_streaming import run_lock
from dbt_spark_streaming.driver import attach, driver_file
from dbt_spark_streaming.driver.driver_file import DriverRecord


def record(root: Path, pid: int = os.getpid(), port: int = 1, conf: dict | None = None) -> DriverRecord:
    return DriverRecord(pid=pid, port=port, secret="s3cret", lakehouse=str(root), conf=conf or {"spark.master": "local[*]"})


def dead_pid() -> int:
    pid = 2 ** 22 - 1  # above the default pid_max of most systems
    while driver_file.process_alive(pid):
        pid -= 1
    return pid


def test_the_driver_file_is_readable_by_its_owner_only(tmp_path):
    path = driver_file.write(record(tmp_path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert driver_file.read(str(tmp_path)) == record(tmp_path)


def test_a_dead_drivers_file_is_ignored_and_removed(tmp_path):
    path = driver_file.write(record(tmp_path, pid=dead_pid()))
    assert driver_file.read(str(tmp_path)) is None
    assert not path.exists()


def test_a_driver_removes_only_its_own_file(tmp_path):
    path = driver_file.write(record(tmp_path))
    driver_file.remove(str(tmp_path), os.getpid() + 1)
    assert path.exists()
    driver_file.remove(str(tmp_path), os.getpid())
    assert not path.exists()


def test_settings_that_differ_are_named_with_both_values():
    driver = {"spark.master": "local[*]", "spark.driver.memory": "4g", "spark.app.name": "x"}
    own = {"spark.master": "local[*]", "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "2",
           "spark.app.name": "y"}
    assert attach.fixed_differences(driver, own) == {
        "spark.driver.memory": ("4g", "2g"), "spark.sql.shuffle.partitions": (None, "2")}


@pytest.mark.parametrize("value, off", [("0", True), ("false", True), ("never", True), ("1", False), ("", False)])
def test_attaching_is_turned_off_by_its_variable(value, off):
    assert attach.attach_turned_off({attach.ATTACH_VARIABLE: value}) is off


def test_without_a_driver_nothing_is_said(tmp_path):
    said = []
    assert attach.try_attach(str(tmp_path), {}, said.append) is None
    assert said == []


def test_a_driver_that_does_not_answer_is_not_waited_on(tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    driver_file.write(record(tmp_path, port=port))
    said = []
    assert attach.try_attach(str(tmp_path), {"spark.master": "local[*]"}, said.append) is None
    assert len(said) == 1 and f"does not answer on 127.0.0.1:{port}" in said[0]
    assert "starting a JVM of this command's own" in said[0]


def test_a_driver_that_hangs_is_given_up_on(tmp_path, monkeypatch):
    monkeypatch.setattr(attach, "HANDSHAKE_SECONDS", 0.3)
    hung = socket.socket()
    hung.bind(("127.0.0.1", 0))
    hung.listen(1)  # accepts, never answers
    driver_file.write(record(tmp_path, port=hung.getsockname()[1]))
    said = []
    began = time.monotonic()
    try:
        assert attach.try_attach(str(tmp_path), {"spark.master": "local[*]"}, said.append) is None
    finally:
        hung.close()
    assert time.monotonic() - began < 3
    assert "did not answer within 0.3 s" in said[0]


def test_a_driver_that_refuses_the_session_says_why(tmp_path):
    refusing = socket.socket()
    refusing.bind(("127.0.0.1", 0))
    refusing.listen(1)

    def answer() -> None:
        connection, _ = refusing.accept()
        with connection:
            request = json.loads(connection.makefile("r").readline())
            assert request["secret"] == "s3cret" and request["pid"] == os.getpid()
            connection.sendall(b'{"error": "Py4JError: no more sessions"}\n')

    thread = threading.Thread(target=answer)
    thread.start()
    driver_file.write(record(tmp_path, port=refusing.getsockname()[1]))
    said = []
    try:
        assert attach.try_attach(str(tmp_path), {"spark.master": "local[*]"}, said.append) is None
    finally:
        thread.join(5)
        refusing.close()
    assert "could not make a session (Py4JError: no more sessions)" in said[0]


def hold_elsewhere(root: Path, model: str):
    """The model's lock as another process holds it: flock is per open file, so a second open
    in this process conflicts like another process would."""
    path = run_lock.model_lock_path(str(root), model)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+")
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    handle.write(json.dumps({"pid": 4242, "command": "dbt run -s silver_x"}))
    handle.flush()
    return handle


def test_a_served_run_skips_a_model_another_process_writes(tmp_path):
    with run_lock.model_claim(str(tmp_path), "silver_x") as claimed:
        assert claimed
        other = open(run_lock.model_lock_path(str(tmp_path), "silver_x"), "a+")
        with pytest.raises(BlockingIOError):  # held while the run runs
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        other.close()
    holder = hold_elsewhere(tmp_path, "silver_x")
    try:
        with run_lock.model_claim(str(tmp_path), "silver_x") as claimed:
            assert not claimed
        assert run_lock.holder_said(run_lock.holder_of_model(str(tmp_path), "silver_x")) == \
            "process 4242 (`dbt run -s silver_x`)"
    finally:
        holder.close()


def test_an_attached_write_waits_for_the_holder_then_names_it(tmp_path, monkeypatch):
    monkeypatch.setattr(run_lock, "_models_held", {})
    holder = hold_elsewhere(tmp_path, "gold_y")
    said = []
    try:
        with pytest.raises(run_lock.LakehouseBusyError, match=r"process 4242 \(`dbt run -s silver_x`\) has been writing it"):
            run_lock.hold_model(str(tmp_path), "gold_y", said.append, wait_seconds=0.3)
    finally:
        holder.close()
    assert said == ["waiting for process 4242 (`dbt run -s silver_x`), which is writing it"]
    run_lock.hold_model(str(tmp_path), "gold_y", said.append, wait_seconds=0.3)  # free now: kept
    with run_lock.model_claim(str(tmp_path), "gold_y") as claimed:
        assert claimed  # this process holds it already
    run_lock._models_held.pop("gold_y").close()


def test_a_remote_lakehouse_has_no_warm_driver(capsys):
    assert not driver_file.local("s3a://bucket/lakehouse") and driver_file.local("/srv/lakehouse")
    assert driver_file.read("s3a://bucket/lakehouse") is None
