"""The warm driver's host on this test process's JVM, and small Python processes that attach to it
(adapter/dbt_spark_streaming/driver/): each its own session, its own callbacks, and what a killed
one held released. A client is a few lines of Python, not dbt: the host is what is tested here;
dbt attached is tests/processes/commands/test_warm_driver.py's."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from dbt_spark_streaming.driver.host import DriverHost

CONF = {"spark.master": "local[*]", "spark.app.name": "tests"}
TIMEOUT = 120  # a bound for a stuck client, not a speed target


@pytest.fixture
def host(spark, tmp_path):
    running = DriverHost(spark, str(tmp_path / "lakehouse"), CONF, kind="driver")
    running.start()
    yield running
    running.stop()


def client(host: DriverHost, body: str, *args: str) -> subprocess.Popen:
    """A Python process that attaches to `host`, then runs `body` with `spark` (its session),
    `say` (a line to the test, on stdout) and `args` from sys.argv[3:]."""
    code = textwrap.dedent("""
        import json, sys
        from dbt_spark_streaming.driver import attach
        said = []
        attached = attach.try_attach(sys.argv[1], json.loads(sys.argv[2]), said.append)
        assert attached is not None, said
        spark = attached.session
        def say(line):
            print(line, flush=True)
    """) + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code, host.lakehouse_root, json.dumps(CONF), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def read_line(process: subprocess.Popen) -> str:
    line = process.stdout.readline().strip()
    assert line, process.stderr.read()
    return line


def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {TIMEOUT} s"
        time.sleep(0.05)


def test_a_clients_micro_batches_call_back_into_the_client(spark, host, tmp_path):
    numbers = str(tmp_path / "numbers")
    spark.range(0, 40).write.format("delta").save(numbers)
    run = client(host, f"""
        seen = []
        def each(batch, batch_id):
            seen.append(batch.count())
        query = (spark.readStream.name("input").format("delta").option("maxFilesPerTrigger", 1).load({numbers!r})
                 .writeStream.foreachBatch(each).trigger(availableNow=True)
                 .option("checkpointLocation", {str(tmp_path / "checkpoint")!r}).start())
        query.awaitTermination()
        say(json.dumps(seen))
    """)
    seen = json.loads(read_line(run))
    assert run.wait(TIMEOUT) == 0, run.stderr.read()
    assert sum(seen) == 40 and len(seen) >= 1
    assert host.attachments == 1
    wait_until(lambda: not host.clients, "detach after the client's exit")


def test_two_clients_at_once_keep_their_own_temp_views(spark, host):
    body = """
        spark.range(int(sys.argv[3])).createOrReplaceTempView("numbers")
        say("ready")
        sys.stdin.readline()
        say(spark.table("numbers").count())
    """
    first, second = (client(host, body, str(rows)) for rows in (3, 7))
    assert read_line(first) == "ready" and read_line(second) == "ready"
    for process in (first, second):
        process.stdin.write("go\n")
        process.stdin.flush()
    assert (read_line(first), read_line(second)) == ("3", "7")
    for process in (first, second):
        assert process.wait(TIMEOUT) == 0, process.stderr.read()
    assert not spark.catalog.tableExists("numbers")  # nor in the driver's own session


def test_a_client_killed_mid_batch_has_its_query_stopped_and_its_server_closed(spark, host, tmp_path):
    numbers = str(tmp_path / "numbers")
    spark.range(0, 10).write.format("delta").save(numbers)
    run = client(host, f"""
        import time
        def each(batch, batch_id):
            say("in a batch")
            time.sleep(600)
        (spark.readStream.name("input").format("delta").load({numbers!r}).writeStream.foreachBatch(each)
         .option("checkpointLocation", {str(tmp_path / "checkpoint")!r}).start())
        time.sleep(600)
    """)
    assert read_line(run) == "in a batch"
    (attached,) = host.clients.values()
    assert len(attached.session.streams().active()) == 1
    port = attached.server.getJavaServer().getListeningPort()

    os.kill(run.pid, signal.SIGKILL)
    run.wait(TIMEOUT)
    wait_until(lambda: not host.clients, "release of the killed client")

    assert len(attached.session.streams().active()) == 0
    assert len(attached.session.streams().listListeners()) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    assert spark.range(3).count() == 3  # the driver serves on
