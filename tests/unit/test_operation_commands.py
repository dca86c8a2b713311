"""The installed command's run-operations: `dbt-spark-streaming reset-checkpoint` and `rollback`
become dbt's command line, with dbt's own options; a mistake stops them before dbt starts."""

from __future__ import annotations

import json

import pytest

from dbt_spark_streaming import command_line
from dbt_spark_streaming.commands import operations as operation_commands


def test_each_becomes_its_run_operation_with_dbts_options(monkeypatch):
    invoked = []
    monkeypatch.setattr(operation_commands, "invoke_operation", lambda command: invoked.append(command) or 0)

    assert command_line.main(["reset-checkpoint", "-s", "silver", "--from-version", "12", "--target", "prod",
                              "--project-dir", "/p", "--profiles-dir", "/profiles"]) == 0
    assert command_line.main(["rollback", "--select", "gold", "--vars", "{stream_trigger: once}"]) == 0

    reset, rollback = invoked
    assert reset[:3] == ["run-operation", "reset_checkpoint", "--args"]
    assert json.loads(reset[3]) == {"select": "silver", "from_version": 12}
    assert reset[4:] == ["--target", "prod", "--project-dir", "/p", "--profiles-dir", "/profiles"]
    assert rollback == ["run-operation", "rollback_redeploy", "--args", '{"select": "gold"}',
                        "--vars", "{stream_trigger: once}"]


def test_a_starting_point_that_cannot_work_stops_before_dbt(monkeypatch, capsys):
    monkeypatch.setattr(operation_commands, "invoke_operation", lambda command: pytest.fail("dbt started"))
    assert command_line.main(["reset-checkpoint", "--select", "m", "--from-version", "x"]) == 2
    assert "Model m: from_version is 'x'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        command_line.main(["rollback"])  # no model
