"""What lifecycle/query_fit.py says of a changed query's inputs and of Spark's refusal, without Spark."""

from __future__ import annotations

from dbt_spark_streaming.jvm.plans import StreamingInput
from dbt_spark_streaming.lifecycle import query_fit

FILE_TAKEN = ("files", "file:///lake/landing/events/2026/1.json")


def test_a_file_source_is_the_same_input_while_its_logged_files_lie_in_the_folder_it_reads():
    assert query_fit._same_input(None, FILE_TAKEN, StreamingInput("json", "/lake/landing/events"), None)
    assert query_fit._same_input(None, FILE_TAKEN, StreamingInput("csv", "file:/lake/landing/events/2026"), None)
    assert not query_fit._same_input(None, FILE_TAKEN, StreamingInput("json", "/lake/landing/event"), None)
    assert not query_fit._same_input(None, FILE_TAKEN, StreamingInput("json", "/lake/landing/others"), None)
    assert not query_fit._same_input(None, FILE_TAKEN, StreamingInput("delta", "/lake/landing/events"), None)
    assert query_fit._same_input(None, FILE_TAKEN, StreamingInput("json", "/lake/landing/*/2026"), None)


def test_a_kafka_source_is_the_same_input_while_it_subscribes_to_the_same_topics():
    was = ("kafka", frozenset({"orders", "refunds"}))
    assert query_fit._same_input(None, was, StreamingInput("kafka", None), frozenset({"refunds", "orders"}))
    assert not query_fit._same_input(None, was, StreamingInput("kafka", None), frozenset({"orders"}))
    assert not query_fit._same_input(None, was, StreamingInput("json", "/lake/orders"), None)
    assert query_fit._same_input(None, was, StreamingInput("kafka", None), None)  # by pattern: not compared


def test_what_the_checkpoint_read_is_said_in_the_users_terms():
    assert query_fit._said(FILE_TAKEN) == "the files of /lake/landing/events/2026"
    assert query_fit._said(("kafka", frozenset({"b", "a"}))) == "Kafka topic(s) a, b"
    assert query_fit._described(StreamingInput("json", "/lake/x")) == "json /lake/x"


def test_sparks_refusal_is_said_without_the_query_ids_plan_or_advice_to_skip_the_check():
    class Refused(Exception):
        pass

    text = (
        "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: "
        "[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE] Provided value schema does not match.\n"
        "Please check number and type of fields.\n"
        "Existing value_schema=StructType(StructField(n,LongType,true)) and new value_schema=...\n"
        "If you want to force running the query without schema validation, set ...\n"
        "=== Streaming Query ===\nIdentifier: [id = 1]"
    )
    said = query_fit._spark_said(Refused(text))
    assert said.startswith("[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE] Provided value schema does not match.")
    assert "Existing value_schema=StructType(StructField(n,LongType,true))" in said
    assert "If you want to force" not in said and "Streaming Query" not in said and "runId" not in said
