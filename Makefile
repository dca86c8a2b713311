# Quick start: `make run` (the demo pipeline) and `make test` (lint + tests).
# Everything is installed into the repository: .venv/ (Python packages), .jars/ (Delta Lake's and
# Spark's Kafka connector's jars from Maven Central), .jars-kafka-broker/ and .jars-s3-store/ (a Kafka
# broker and an S3 API server for the tests, kept off Spark's classpath). Data lives in .lakehouse/ (docs/lakehouse.md says how to move it).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
JARS := .jars/.complete
KAFKA_JARS := .jars-kafka-broker/.complete
S3_STORE_JARS := .jars-s3-store/.complete
KILLS ?= 20
STORE ?= local
# Spark's jars for this repository: fetched by Maven (jars/pom.xml), not on first use into the
# user's cache as an installed adapter does (adapter/dbt_spark_streaming/classpath.py).
export SPARK_EXTRA_JARS_DIR := $(CURDIR)/.jars
SEED ?= 1

.PHONY: setup kafka-jars run lint test test-fast test-unit test-session test-adapter test-processes serve status stop report chaos cluster-start cluster-run cluster-stop s3-store-start s3-store-stop bench bench-run-cost bench-modes bench-cdc bench-expectations bench-unit-tests bench-file-pushdown bench-landing-listing bench-delta-commit bench-latency bench-object-store bench-folder-listing bench-soak clean

setup: $(INSTALLED) $(JARS) $(KAFKA_JARS) $(S3_STORE_JARS)

$(INSTALLED): requirements.txt pyproject.toml adapter/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# A pip that reads per-requirement --config-settings (the editable installs in requirements.txt).
	$(BIN)/python -m pip install --quiet --disable-pip-version-check pip==26.3
	# PYTHONWARNINGS: setuptools warns at length that compat editable installs are transitional;
	# its version is pinned in pyproject.toml, and a plain path entry is what the dbt namespace needs.
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	# `source .venv/bin/activate` is then all a shell needs for plain `dbt run`.
	grep -q DBT_PROFILES_DIR $(BIN)/activate || \
		printf '\nexport DBT_PROFILES_DIR="%s/profiles"\n' "$(CURDIR)" >> $(BIN)/activate
	grep -q SPARK_EXTRA_JARS_DIR $(BIN)/activate || \
		printf 'export SPARK_EXTRA_JARS_DIR="%s/.jars"\n' "$(CURDIR)" >> $(BIN)/activate
	touch $@

$(JARS): jars/pom.xml $(INSTALLED)
	$(BIN)/python -m python_runners jars
	touch $@

kafka-jars: $(KAFKA_JARS)

$(KAFKA_JARS): jars/kafka-broker/pom.xml $(INSTALLED)
	$(BIN)/python -m python_runners jars --kafka-broker
	touch $@

$(S3_STORE_JARS): jars/s3-store/pom.xml $(INSTALLED)
	$(BIN)/python -m python_runners jars --s3-store
	touch $@

run: setup
	$(BIN)/python -m python_runners demo

lint: $(INSTALLED)
	$(BIN)/sqlfluff lint models
	$(BIN)/python -m python_runners lint
	$(BIN)/ruff check python_runners adapter tests bench
	$(BIN)/python -m python_runners.ops.import_rules
	$(BIN)/python -m python_runners.ops.doc_paths
	$(BIN)/python -m python_runners.ops.plugin_calls
	$(BIN)/python -m python_runners.ops.config_reference --check

# The suite's tiers, fastest first, each its own pytest (and JVM, but the unit tier's): a broken
# unit test fails `make test` in seconds. Each writes JUnit XML into .test-times/, and `make test`
# ends with every tier's time and its 20 slowest tests (python -m python_runners.testing.test_times).
TEST_TIMES := .test-times
PYTEST_TIER = $(BIN)/python -m pytest --junitxml=$(TEST_TIMES)/$(1).xml $(2) tests/$(1)
# The session and processes tiers on two workers (pytest-xdist), each with a lakehouse and JVM of
# its own, whole files to a worker so that a file's projects, tables and services stay together.
# One worker leaves part of the 2 cores idle while it waits on Spark's latency (a query's start,
# a commit, a process starting); two fill them. Measured: 8 of the session tier's files
# 464 -> 354 s (Parallel GC with it, tests/session/conftest.py), the processes tier 20.1 -> 15.8 min.
TEST_WORKERS ?= 2
WORKERS = -n $(TEST_WORKERS) --dist loadfile

test: setup lint
	rm -f $(TEST_TIMES)/*.xml
	$(call PYTEST_TIER,unit)
	$(call PYTEST_TIER,adapter)
	$(call PYTEST_TIER,session,$(WORKERS))
	$(call PYTEST_TIER,processes,$(WORKERS))
	$(BIN)/python -m python_runners.testing.test_times $(TEST_TIMES)

# Lint, the unit tier and the session tier but its tests marked slow (those that recompute
# tables landing after landing, or run a matrix of writes or formats): 6.7 minutes on 2 cores.
# `make test` runs those too. Its JUnit XML goes to .test-times/fast/, so a whole run's stays.
test-fast: setup lint
	$(call PYTEST_TIER,unit)
	$(BIN)/python -m pytest --junitxml=$(TEST_TIMES)/fast/session.xml $(WORKERS) -m "not slow" tests/session

# tests/unit: no JVM, no dbt run; seconds.
test-unit: $(INSTALLED)
	$(call PYTEST_TIER,unit)

# tests/session: one Spark session, every dbt command in-process; no test starts a process.
test-session: setup
	$(call PYTEST_TIER,session,$(WORKERS))

# tests/adapter: dbt's own adapter test suite through the plugin.
test-adapter: setup
	$(call PYTEST_TIER,adapter)

# tests/processes: what needs processes of its own: SIGKILLed runs, serving, the cluster, Kafka,
# the chaos run, commands as users type them and the installed package.
test-processes: setup
	$(call PYTEST_TIER,processes,$(WORKERS))

# Always-on: every streaming model served, failed queries restarted with backoff; `make status`
# and `make stop` from another shell. TRIGGER: on_new_data (each model runs when one of its
# inputs commits, nothing while nothing lands) or a processing-time interval ('500 milliseconds').
TRIGGER ?= on_new_data
serve: setup
	$(BIN)/python -m python_runners service start --trigger "$(TRIGGER)"

status: $(INSTALLED)
	$(BIN)/python -m python_runners service status

stop: $(INSTALLED)
	$(BIN)/python -m python_runners service stop

# Throughput and batch duration per model over time, from the progress table (PNG and HTML).
report: setup
	$(BIN)/python -m python_runners report

# SIGKILL the always-on pipeline KILLS times while data lands, then check every record and gold;
# STORE=s3 puts the lakehouse on an S3 API on loopback (docs/object-storage.md).
chaos: setup
	$(BIN)/python -m python_runners chaos --kills $(KILLS) --seed $(SEED) --store $(STORE)

# A standalone Spark cluster (master + 2 workers) and a PostgreSQL metastore on loopback, and the
# demo on it through the `cluster` dbt target, in a lakehouse of its own.
CLUSTER_LAKEHOUSE ?= $(CURDIR)/.lakehouse/on-cluster
cluster-start: setup
	LAKEHOUSE_DIR="$(CLUSTER_LAKEHOUSE)" $(BIN)/python -m python_runners cluster start

cluster-run: setup
	LAKEHOUSE_DIR="$(CLUSTER_LAKEHOUSE)" DBT_TARGET=cluster $(BIN)/python -m python_runners demo

# An S3 API on loopback (S3Proxy, objects under .lakehouse/s3-store/) for the `s3` dbt target:
# `start` prints the variables to export (docs/object-storage.md).
s3-store-start: setup
	$(BIN)/python -m python_runners s3-store start

s3-store-stop: $(INSTALLED)
	$(BIN)/python -m python_runners s3-store stop

cluster-stop: $(INSTALLED)
	LAKEHOUSE_DIR="$(CLUSTER_LAKEHOUSE)" $(BIN)/python -m python_runners cluster stop

# Incremental vs recompute, dbt vs hand-written PySpark, latency and throughput, run cost; writes
# docs/BENCHMARKS.md. Sizes: make bench BENCH_ARGS='--history 1000000 --pairs 3' (see --help).
bench: setup
	$(BIN)/python -m bench $(BENCH_ARGS)

# Only the run-cost part (no-op run vs a bare session start, 1% new, first run, dbt vs hand-written)
# at small sizes, about 10 minutes on 2 cores; rewrites only its section of docs/BENCHMARKS.md.
bench-run-cost: setup
	$(BIN)/python -m bench --parts run_cost --quick $(BENCH_ARGS)

# Per-batch time of output_mode update (MERGE) vs complete at 10k, 100k and 1M keys (a benchmark, not a test).
bench-modes: setup
	$(BIN)/python -m bench.modes

# Per-batch time of a cdc_table's apply (SCD1 and SCD2 by MERGE) at 100k and 1M keys with 1% of them
# changed a batch, and where it goes; about 10 minutes on 2 cores; rewrites section 8 of docs/BENCHMARKS.md.
bench-cdc: setup
	$(BIN)/python -m bench.cdc $(BENCH_ARGS)

# Per-batch time of five expectations (warn, drop, fail, quarantine) on a 1M-row batch against none,
# and where it goes; about 5 minutes on 2 cores; rewrites section 9 of docs/BENCHMARKS.md.
bench-expectations: setup
	$(BIN)/python -m bench.expectations $(BENCH_ARGS)

# Wall time of the demo's three dbt unit tests (`dbt test --select test_type:unit`) once the session
# is up, 3 runs after one `dbt build` of their inputs; issue 24's target is under 60 s. About 3 minutes.
bench-unit-tests: setup
	$(BIN)/python -m bench.unit_tests $(BENCH_ARGS)

# Streaming json and csv files through a selective and a mild filter with Spark's filter pushdown
# on and off (the session turns it off so that "rows in" counts every line read); a few minutes;
# prints the figures of docs/BENCHMARKS.md section 11.
bench-file-pushdown: setup
	$(BIN)/python -m bench.file_pushdown $(BENCH_ARGS)

# Listing a landing folder once a file source has taken 100 and 100,000 files, without a clean-up
# and with Spark's cleanSource (archive_to, delete_processed); about 15 minutes on a quiet 2-core
# machine (taking 100,000 tiny files is most of it); prints the figures of docs/BENCHMARKS.md section 12.
bench-landing-listing: setup
	$(BIN)/python -m bench.landing_listing $(BENCH_ARGS)

# One-row Delta appends to a local table with the session's local-file settings and with Hadoop's
# and Delta's defaults; about 3 minutes; prints the figures of docs/BENCHMARKS.md section 13.
bench-delta-commit: setup
	$(BIN)/python -m bench.delta_commit $(BENCH_ARGS)

# Always-on latency (three hops, then all nine models) with its per-hop, per-phase breakdown, and
# update vs complete at 1M keys; about 15 minutes; rewrites sections 3 and 5 of docs/BENCHMARKS.md.
bench-latency: setup
	$(BIN)/python -m bench.latency $(BENCH_ARGS)

# The lakehouse on the S3 API on loopback against local disk: no-op and 1% runs, three-hop
# latency, the idle service's requests per minute (section 15).
bench-object-store: setup
	$(BIN)/python -m bench.object_store $(BENCH_ARGS)

# The project's own listings of a folder of 1,000 to 20,000 files: on the S3 API on loopback
# (the service's watch, a no-op run's check) and on local disk (a source's data files); about 5
# minutes; prints the figures of docs/BENCHMARKS.md section 16.
bench-folder-listing: setup
	$(BIN)/python -m bench.folder_listing $(BENCH_ARGS)

# The always-on service for 60 minutes (BENCH_ARGS='--minutes 2880' for two days), every demo
# model serving, a file every 0.5 s: latency to gold in the last 10 minutes vs the first 10, live
# data files and checkpoint tombstones of every table at the end, the service's memory (JVM plus
# Python) 10 minutes in and at the end; one summary line (not part of make test).
bench-soak: setup
	$(BIN)/python -m bench.latency.soak $(BENCH_ARGS)

clean:
	rm -rf .lakehouse target logs
