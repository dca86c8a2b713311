"""`dbt debug` shows, under Connection, where the profile's lakehouse keeps its tables,
checkpoints and landing files, and which metastore it uses, without a password."""

from __future__ import annotations

from dbt.adapters.spark_streaming.connections import SparkStreamingCredentials


def shown(monkeypatch, tmp_path, environ: dict[str, str] | None = None, **profile) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)  # the project's folder when dbt is given none
    for variable in ("LAKEHOUSE_DIR", "LAKEHOUSE_WAREHOUSE_DIR", "LAKEHOUSE_CHECKPOINT_DIR",
                     "LAKEHOUSE_LANDING_DIR", "LAKEHOUSE_METASTORE_DIR"):
        monkeypatch.delenv(variable, raising=False)
    for variable, value in (environ or {}).items():
        monkeypatch.setenv(variable, value)
    return dict(SparkStreamingCredentials.from_dict({"schema": "analytics", **profile}).connection_info())


def test_the_lakehouse_parts_are_shown_under_the_profiles_lakehouse_dir(monkeypatch, tmp_path):
    info = shown(monkeypatch, tmp_path, lakehouse_dir="data/lake")
    root = tmp_path.resolve() / "data" / "lake"
    assert info == {
        "master": "local[*]", "schema": "analytics", "lakehouse": str(root),
        "warehouse": f"{root}/warehouse", "checkpoints": f"{root}/checkpoints",
        "landing": f"{root}/landing", "metastore": f"embedded Derby in {root}/metastore",
    }


def test_a_part_moved_by_its_variable_is_shown_where_it_went(monkeypatch, tmp_path):
    info = shown(monkeypatch, tmp_path, {"LAKEHOUSE_LANDING_DIR": str(tmp_path / "incoming")})
    assert info["lakehouse"] == str(tmp_path.resolve() / ".lakehouse")
    assert info["landing"] == str(tmp_path.resolve() / "incoming")


def test_a_shared_metastore_is_shown_without_its_password(monkeypatch, tmp_path):
    info = shown(monkeypatch, tmp_path, metastore_url="jdbc:postgresql://127.0.0.1:5439/metastore?user=hive&password=s3cret")
    assert info["metastore"] == "jdbc:postgresql://127.0.0.1:5439/metastore?user=hive&password=***"
