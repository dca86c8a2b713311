"""jvm/session_settings.py: settings changed for a block come back as they were, including
unset, so Spark's default or the profile's value applies again."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from dict_conf import DictConf

from dbt_spark_streaming.jvm.session_settings import set_settings, settings_for_now


def _session(**values: str):
    return SimpleNamespace(conf=DictConf(values))


def test_a_block_sees_its_settings_and_the_session_gets_its_own_back():
    spark = _session(kept="profile", dropped="x")
    with settings_for_now(spark, {"kept": "served", "absent": "1", "dropped": None}):
        assert spark.conf.values == {"kept": "served", "absent": "1"}
    assert spark.conf.values == {"kept": "profile", "dropped": "x"}


def test_the_settings_come_back_when_the_block_raises():
    spark = _session(kept="profile")
    with pytest.raises(RuntimeError):
        with settings_for_now(spark, {"kept": "served", "absent": "1"}):
            raise RuntimeError("a batch failed")
    assert spark.conf.values == {"kept": "profile"}


def test_what_set_settings_returns_sets_them_back():
    spark = _session(a="1")
    before = set_settings(spark, {"a": "2", "b": "3"})
    assert before == {"a": "1", "b": None}
    set_settings(spark, before)
    assert spark.conf.values == {"a": "1"}
