"""A real single-node Kafka broker on loopback, for tests: KRaft, broker and controller in one JVM.

    with KafkaBroker(tmp_path) as broker:
        broker.create_topic("recordings", partitions=2)
        spark.readStream.name("recordings").format("kafka").option("kafka.bootstrap.servers", broker.bootstrap_servers)

It runs the release in `.jars-kafka-broker/` (`make kafka-jars`) as a process of its own, on free
loopback ports; its config, data and log (`broker.log`) stay in the work folder. Leaving the block
stops it: SIGTERM, then SIGKILL if it has not exited within `stop_timeout` seconds. `stop()` and
`start()` restart it with its topics and messages.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import time
import uuid
from pathlib import Path
from typing import Mapping, Optional

from python_runners.infra import loopback
from python_runners.infra.kafka_broker_jars import JARS_DIR, classpath

LOG4J_CONFIG = Path(__file__).with_name("kafka_broker_log4j2.properties")
# KafkaRaftServer logs this once the broker serves clients (after its controller unfenced it).
STARTED_LINE = "Kafka Server started"
# A small heap, and start-up over peak speed: a test broker carries little traffic.
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
# What a failed start shows of broker.log (kafka_broker_log4j2.properties sets its line format).
LOG_ENTRY = re.compile(r"^\[\d{4}-\d\d-\d\d [\d:,]+\] [A-Z]+ ")
ERROR_ENTRY = re.compile(r"^\[[^]]+\] (ERROR|FATAL) ")
STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")
LOG_ERROR_ENTRIES = 5
LOG_TAIL_LINES = 30


class KafkaBrokerError(RuntimeError):
    pass


class KafkaBroker:
    def __init__(
        self,
        workdir: str | os.PathLike,
        overrides: Optional[Mapping[str, str]] = None,
        start_timeout: float = 90.0,
        stop_timeout: float = 20.0,
        jars_dir: Path = JARS_DIR,
    ):
        self.workdir = Path(workdir).resolve()
        self.overrides = dict(overrides or {})
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self.classpath = classpath(jars_dir)  # missing jars fail here, naming the make target
        self.java = loopback.java("The Kafka broker")
        self.port: Optional[int] = None
        self.controller_port: Optional[int] = None
        self.process: Optional[subprocess.Popen] = None

    @property
    def bootstrap_servers(self) -> str:
        if self.port is None:
            raise KafkaBrokerError("The Kafka broker is not started; use `with KafkaBroker(...)`.")
        return f"127.0.0.1:{self.port}"

    @property
    def config_file(self) -> Path:
        return self.workdir / "server.properties"

    @property
    def log_file(self) -> Path:
        return self.workdir / "broker.log"

    def __enter__(self) -> "KafkaBroker":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> "KafkaBroker":
        """Start the broker; after `stop()`, start it again on the same ports with its data."""
        if self.port is None:
            self.workdir.mkdir(parents=True, exist_ok=True)
            self.port, self.controller_port = loopback.free_ports(2)
            self.config_file.write_text(self._server_properties())
            # Formatting records the controller's address, so a restart must keep the ports.
            self._format_storage()
        try:
            self.process = loopback.start_server(
                self._java_command("kafka.Kafka", str(self.config_file)), self.log_file)
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        process, self.process = self.process, None
        loopback.stop_server(process, self.stop_timeout)

    def create_topic(self, name: str, partitions: int = 1) -> None:
        self._run_tool(
            f"Creating Kafka topic {name!r} on {self.bootstrap_servers}",
            "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", self.bootstrap_servers,
            "--create", "--topic", name, "--partitions", str(partitions), "--replication-factor", "1",
        )

    def _run_tool(self, doing: str, *command: str) -> None:
        """One of Kafka's command-line tools, run to its end; its output in the error if it fails."""
        result = subprocess.run(self._java_command(*command), capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise KafkaBrokerError(f"{doing} failed:\n{result.stdout}{result.stderr}")

    def _server_properties(self) -> str:
        broker = f"127.0.0.1:{self.port}"
        controller = f"127.0.0.1:{self.controller_port}"
        settings = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": controller,
            "controller.listener.names": "CONTROLLER",
            "listeners": f"PLAINTEXT://{broker},CONTROLLER://{controller}",
            "advertised.listeners": f"PLAINTEXT://{broker},CONTROLLER://{controller}",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(self.workdir / "data"),
            # One node: internal topics get one replica, and one partition keeps start-up short.
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            **self.overrides,
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _format_storage(self) -> None:
        # --standalone: this node alone is the initial controller quorum (KIP-853, Kafka 4.x).
        self._run_tool(
            f"Formatting the Kafka broker's storage in {self.workdir / 'data'} (config {self.config_file})",
            "kafka.tools.StorageTool", "format", "--standalone",
            "--cluster-id", _random_cluster_id(), "--config", str(self.config_file),
        )

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        seen = ""
        with open(self.log_file, errors="replace") as log:
            while True:
                seen = (seen + log.read())[-100_000:]
                if STARTED_LINE in seen and loopback.accepts_connections(self.port):
                    return
                if self.process.poll() is not None:
                    raise KafkaBrokerError(
                        f"The Kafka broker exited with code {self.process.returncode} while "
                        f"starting.\n{self._log_excerpt()}"
                    )
                if time.monotonic() > deadline:
                    raise KafkaBrokerError(
                        f"The Kafka broker did not start within {self.start_timeout:.0f} s "
                        f"(KafkaBroker(start_timeout=...)).\n{self._log_excerpt()}"
                    )
                time.sleep(0.2)

    def _log_excerpt(self) -> str:
        """The broker's errors with their causes, else the end of its log; no stack frames."""
        entries: list[list[str]] = [[]]
        for line in self.log_file.read_text(errors="replace").splitlines():
            if LOG_ENTRY.match(line):
                entries.append([])
            if not STACK_FRAME.match(line):
                entries[-1].append(line)
        errors = [entry for entry in entries if entry and ERROR_ENTRY.match(entry[0])]
        if errors:
            lines = [line for entry in errors[-LOG_ERROR_ENTRIES:] for line in entry]
            return f"Its errors, from {self.log_file} (stack frames left out):\n" + "\n".join(lines)
        lines = [line for entry in entries for line in entry][-LOG_TAIL_LINES:]
        return f"Last lines of {self.log_file}:\n" + "\n".join(lines)

    def _java_command(self, main_class: str, *args: str) -> list[str]:
        return [
            self.java, *JVM_OPTIONS, f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
            "-cp", self.classpath, main_class, *args,
        ]


def _random_cluster_id() -> str:
    """A Kafka Uuid: 16 random bytes, URL-safe base64 without padding."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):  # a leading dash would read as a command-line option
            return cluster_id
