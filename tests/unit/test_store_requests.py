"""What the service asked of an object store, in its status file and in `status`'s output."""

from __future__ import annotations

from dbt_spark_streaming.commands import service
from dbt_spark_streaming.lakehouse import Lakehouse
from dbt_spark_streaming.progress import status_file

REQUESTS = {"requests": 5321, "list": 812, "head": 3990, "get": 301, "put": 212, "delete": 6}


def test_service_status_says_the_requests_to_the_object_store_when_the_file_has_them(tmp_path, capsys):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path)})
    status_file.StatusFile(lakehouse).write([], store_requests=REQUESTS)

    assert service.status(lakehouse) == 0

    assert status_file.read(lakehouse)["store_requests"] == REQUESTS
    assert capsys.readouterr().out.splitlines()[-1] == (
        "  requests to the lakehouse's object store since the service started: 5321 "
        "(list 812, head 3990, get 301, put 212, delete 6)")


def test_a_lakehouse_on_local_disk_has_no_requests_line(tmp_path, capsys):
    lakehouse = Lakehouse.from_env({"LAKEHOUSE_DIR": str(tmp_path)})
    status_file.StatusFile(lakehouse).write([])

    assert service.status(lakehouse) == 0
    assert "object store" not in capsys.readouterr().out
