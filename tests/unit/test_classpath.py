"""Where Spark's extra jars come from for an installed adapter (adapter/dbt_spark_streaming/classpath.py):
the folder, what a first session's resolution keeps of Ivy's files, and Ivy's settings."""

from __future__ import annotations

from pathlib import Path

from dbt_spark_streaming import classpath


def test_the_folder_is_the_configured_one_or_one_per_set_of_jars_in_the_users_cache(monkeypatch, tmp_path):
    assert classpath.jars_dir({"SPARK_EXTRA_JARS_DIR": "/opt/jars"}) == Path("/opt/jars")
    folder = classpath.jars_dir({"XDG_CACHE_HOME": str(tmp_path)})
    assert folder.parent == tmp_path / "dbt-spark-streaming" / "jars"
    monkeypatch.setattr(classpath, "KAFKA_CONNECTOR", "org.apache.spark:spark-sql-kafka-0-10_2.13:9.9.9")
    assert classpath.jars_dir({"XDG_CACHE_HOME": str(tmp_path)}) != folder  # another version, another folder


def test_a_resolution_keeps_what_pyspark_does_not_ship_under_maven_names(monkeypatch, tmp_path):
    ivy_jars = tmp_path / "ivy" / "jars"
    ivy_jars.mkdir(parents=True)
    for name in ("io.delta_delta-spark_4.1_2.13-4.4.0.jar", "org.apache.kafka_kafka-clients-3.9.1.jar",
                 "org.apache.parquet_parquet-hadoop-1.16.0.jar"):  # pyspark ships parquet-hadoop
        (ivy_jars / name).write_bytes(b"jar")
    monkeypatch.setattr(classpath, "JARS_DIR", tmp_path / "cache" / "jars")
    (tmp_path / "cache" / "jars.staging").mkdir(parents=True)  # a copy cut short earlier

    kept = classpath.keep_resolved_jars(str(tmp_path / "ivy"))

    assert [Path(jar).name for jar in kept] == ["delta-spark_4.1_2.13-4.4.0.jar", "kafka-clients-3.9.1.jar"]
    assert not (tmp_path / "cache" / "jars.staging").exists()


def test_ivy_reads_the_configured_repository_only(monkeypatch, tmp_path):
    monkeypatch.setattr(classpath, "user_cache", lambda environ=None: tmp_path)
    monkeypatch.setattr(classpath, "MAVEN_CENTRAL", "https://mirror.example/maven2/")

    conf = classpath.resolution_conf()

    assert conf["spark.jars.packages"].split(",") == list(classpath.packages())
    settings = Path(conf["spark.jars.ivySettings"]).read_text()
    assert 'root="https://mirror.example/maven2/"' in settings and ".m2" not in settings
    assert conf["spark.jars.ivy"] == str(tmp_path / "ivy" / "homes" / classpath.JARS_DIR.name)
    assert f'defaultCacheDir="{tmp_path / "ivy" / "cache"}"' in settings  # downloads shared


def test_each_set_of_jars_resolves_into_a_folder_of_its_own(monkeypatch, tmp_path):
    """Ivy copies what it resolves into its home's jars/: shared, the jars of a version resolved
    before (Delta's for Spark 4.1 after an upgrade to 4.2) were kept with the new ones."""
    monkeypatch.setattr(classpath, "user_cache", lambda environ=None: tmp_path)
    monkeypatch.setattr(classpath, "JARS_DIR", tmp_path / "jars" / "spark-4.1.4-aaa")
    older = Path(classpath.resolution_conf()["spark.jars.ivy"])
    (older / "jars").mkdir()
    (older / "jars" / "io.delta_delta-spark_4.1_2.13-4.4.0.jar").write_bytes(b"jar")
    monkeypatch.setattr(classpath, "JARS_DIR", tmp_path / "jars" / "spark-4.2.0-bbb")

    newer = Path(classpath.resolution_conf()["spark.jars.ivy"])

    assert newer != older and not (newer / "jars").exists()


def test_the_s3a_connector_is_at_pysparks_own_hadoop_without_the_sdk_bundle():
    hadoop = classpath.hadoop_version()
    assert Path(classpath.PYSPARK_JARS, f"hadoop-client-api-{hadoop}.jar").exists()
    packages = classpath.s3a_packages()
    assert packages[0] == f"org.apache.hadoop:hadoop-aws:{hadoop}"
    assert not any(package.startswith("software.amazon.awssdk:bundle:") for package in packages)
    assert {package.split(":")[1] for package in packages[1:]} == {"s3", "s3-transfer-manager", "sts"}


def test_only_a_session_on_s3a_gets_the_s3a_jars(monkeypatch, tmp_path):
    monkeypatch.setattr(classpath, "JARS_DIR", tmp_path)
    (tmp_path / "delta-spark_4.2_2.13-4.4.0.jar").write_bytes(b"jar")
    (tmp_path / classpath.S3A_FOLDER).mkdir()
    (tmp_path / classpath.S3A_FOLDER / "hadoop-aws-3.5.0.jar").write_bytes(b"jar")

    assert classpath.uses_s3a(["/data/lakehouse", "s3a://bucket/lakehouse/warehouse"])
    assert not classpath.uses_s3a(["/data/lakehouse", "file:/data/landing", "abfss://c@a.dfs.core.windows.net/x"])
    assert classpath.appended_class_path("local[*]") == []
    assert [Path(jar).name for jar in classpath.appended_class_path("local[*]", s3a=True)] == ["hadoop-aws-3.5.0.jar"]
    cluster_jars, _ = classpath.class_paths("spark://127.0.0.1:7077", s3a=True)
    assert [Path(jar).name for jar in cluster_jars] == ["delta-spark_4.2_2.13-4.4.0.jar", "hadoop-aws-3.5.0.jar"]
    assert classpath.appended_class_path("spark://127.0.0.1:7077", s3a=True) == []


def test_a_local_session_on_s3a_keeps_the_class_path_the_class_data_archive_was_made_for(monkeypatch, tmp_path):
    """The S3A jars go after Spark's own (SPARK_DIST_CLASSPATH), not on the driver's extra class
    path, which comes first: the archive serves a class path that starts with its own."""
    monkeypatch.setattr(classpath, "JARS_DIR", tmp_path)
    (tmp_path / "delta-spark_4.2_2.13-4.4.0.jar").write_bytes(b"jar")
    (tmp_path / classpath.S3A_FOLDER).mkdir()
    (tmp_path / classpath.S3A_FOLDER / "hadoop-aws-3.5.0.jar").write_bytes(b"jar")

    assert classpath.class_paths("local[*]", s3a=True) == classpath.class_paths("local[*]")
    assert classpath.dist_class_path_with(None, ["/j/a.jar", "/j/b.jar"]) == "/j/a.jar:/j/b.jar"
    assert classpath.dist_class_path_with("/hadoop/x.jar:/j/a.jar", ["/j/a.jar", "/j/b.jar"]) == (
        "/hadoop/x.jar:/j/a.jar:/j/b.jar")
