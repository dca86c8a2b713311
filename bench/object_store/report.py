"""Section 15 of docs/BENCHMARKS.md: the lakehouse on the loopback S3 store against local disk."""

from __future__ import annotations

from bench.harness.doc import run_line, table
from bench.harness.machine import versions_tag
from bench.latency.report import latency_summary
from python_runners.testing.lakehouse_store import KINDS

HEADING = "## 15. The lakehouse on an S3 API (S3Proxy on loopback) against local disk"
REQUEST_KINDS = ("list", "head", "get", "put", "delete")


def _seconds(values: list[float]) -> str:
    return ", ".join(f"{value:.1f}" for value in values)


def object_store_section(run: dict, runs: dict, latency: dict[str, dict], idle: dict[str, dict]) -> list[str]:
    medians = runs["median_s"]
    lines = [HEADING, "", run_line(run), "",
             f"Two lakehouses of the demo, one on local disk and one on S3Proxy 4.1.0 (file back end) "
             f"on 127.0.0.1 through S3A, each with {runs['history']:,} recordings landed, built and "
             "run before. Fresh `dbt run --select config.materialized:streaming_table "
             "config.materialized:cdc_table` processes, timed from outside, alternating local and s3: "
             f"first with nothing new, then each after a landing of {runs['new']:,} recordings (1%) "
             "with the other two sources' files.", ""]
    rows = []
    for part, label in (("noop", "no-op `dbt run`"), ("one_pct", "1% run")):
        local, s3 = medians[part]["local"], medians[part]["s3"]
        rows.append([label, f"{local:.1f} s", f"{s3:.1f} s", f"{s3 / local:.2f}",
                     _seconds(runs["walls_s"][part]["local"]), _seconds(runs["walls_s"][part]["s3"])])
    lines += table(["run", "local, median", "s3, median", "s3 / local", "local runs", "s3 runs"], rows)
    lines += ["", "The three-hop path served on_new_data (section 3's measure, fewer landings); then every "
              f"model of the demo served ({idle['s3']['queries']} streaming queries), a few landings, and the service "
              f"idle for {idle['s3']['idle_seconds']:.0f} s with every model caught up:", ""]
    rows = []
    for kind in KINDS:
        summary = latency_summary(latency[kind])
        requests = idle[kind].get("idle_store_requests_per_min")
        rows.append([kind, summary["landings"], f"{summary['p50_ms']:.0f} ms", f"{summary['p95_ms']:.0f} ms",
                     f"{idle[kind]['idle_cpu_pct']:.1f}%",
                     "-" if not requests else f"{requests['requests']:.1f} ("
                     + ", ".join(f"{kind_} {requests[kind_]:.1f}" for kind_ in REQUEST_KINDS if requests[kind_])
                     + ")"])
    lines += table(["store", "landings", "p50", "p95", "idle CPU (one core)", "idle requests per minute"], rows)
    lines += ["", "Loopback answers a request in well under a millisecond; a real bucket takes 10-50 ms "
              "(more for a PUT of a large file), which adds to every figure here in proportion to the "
              "requests a run makes. The idle requests are what a bucket bills while the service "
              "waits (the status file's `store_requests`, from S3A's own counters).", ""]
    return lines


def object_store_summary(runs: dict, latency: dict[str, dict], idle: dict[str, dict]) -> str:
    medians = runs["median_s"]
    p50 = {kind: latency_summary(latency[kind])["p50_ms"] for kind in KINDS}
    requests = (idle["s3"].get("idle_store_requests_per_min") or {}).get("requests")
    return ("bench object-store: "
            f"noop_s={medians['noop']['local']:.1f}/{medians['noop']['s3']:.1f} "
            f"one_pct_s={medians['one_pct']['local']:.1f}/{medians['one_pct']['s3']:.1f} "
            f"p50_ms={p50['local']:.0f}/{p50['s3']:.0f} "
            f"idle_requests_per_min={'n/a' if requests is None else format(requests, '.1f')} {versions_tag()}")
