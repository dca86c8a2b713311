"""`make lint`'s check of the repository paths the docs name (python_runners/ops/doc_paths.py),
on a small repository with planted dead paths."""

from __future__ import annotations

from pathlib import Path

from python_runners.ops import doc_paths
from python_runners.ops.doc_paths import dead_paths, main


def repository(root: Path) -> Path:
    (root / "adapter/dbt_spark_streaming/lifecycle").mkdir(parents=True)
    (root / "adapter/dbt_spark_streaming/lifecycle/query_fit.py").write_text('"""See lifecycle/query_fit.py."""\n')
    (root / "docs").mkdir()
    (root / "python_runners").mkdir()
    (root / "docs/changing-models.md").write_text("# Changing models\n")
    (root / "README.md").write_text(
        "See docs/changing-models.md and runtime/lifecycle/query_fit.py.\n"
        "```sql\n-- models/bronze/yours.sql: a user's project, not this repository\n```\n")
    return root


def test_paths_that_exist_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(doc_paths, "git_tracked", lambda repo: None)  # no git process in this tier
    assert dead_paths(repository(tmp_path)) == []
    assert main([str(tmp_path)]) == 0


def test_a_moved_file_named_in_a_doc_a_docstring_or_a_comment_is_found(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(doc_paths, "git_tracked", lambda repo: None)
    repo = repository(tmp_path)
    (repo / "docs/operating.md").write_text("The service: python_runners/runtime/run/serving.py.\n")
    (repo / "adapter/dbt_spark_streaming/lifecycle/redeploy.py").write_text(
        '"""Built beside the table (lifecycle/beside.py)."""\n\n# see runtime/run/gone.py\nX = "not/a/mention.py"\n')

    dead = {(found.file, found.path) for found in dead_paths(repo)}

    assert dead == {
        ("docs/operating.md", "python_runners/runtime/run/serving.py"),
        ("adapter/dbt_spark_streaming/lifecycle/redeploy.py", "lifecycle/beside.py"),
        ("adapter/dbt_spark_streaming/lifecycle/redeploy.py", "runtime/run/gone.py"),
    }
    assert main([str(repo)]) == 1
    assert "docs/operating.md:1: names python_runners/runtime/run/serving.py" in capsys.readouterr().out


def test_a_folder_git_does_not_track_is_not_the_repositorys(tmp_path):
    repo = repository(tmp_path)
    (repo / "target").mkdir()  # dbt's, on this machine only
    (repo / "docs/run.md").write_text("dbt writes target/run_results.json.\n")
    tracked = ["README.md", "docs/changing-models.md", "docs/run.md",
               "adapter/dbt_spark_streaming/lifecycle/query_fit.py"]
    assert dead_paths(repo, tracked) == []
    assert [found.path for found in dead_paths(repo, None)] == ["target/run_results.json"]
