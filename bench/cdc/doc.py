"""Section 8 of docs/BENCHMARKS.md, from the CDC apply benchmark's JSON result."""

from __future__ import annotations

from bench.harness.doc import NOT_RUN, plural, run_line, table

CDC_HEADING = "## 8. CDC apply: a cdc_table's MERGE per batch"


def cdc_section(result: dict | None) -> list[str]:
    lines = [CDC_HEADING, ""]
    if result is None:
        return lines + [NOT_RUN, ""]
    rows = result["rows"]
    feed = rows[0]["feed"]
    kinds = ", ".join(f"{feed[kind]} {label}" for kind, label in (
        ("update", "updates"), ("update_twice", "keys updated twice"), ("delete", "deletes"),
        ("insert", "new keys"), ("late", "late changes (older than the key's row)"),
        ("repeat", "repeats of the batch before"))) + f", at {rows[0]['keys']:,} keys"
    lines += [
        run_line(result, result.get("code", "not recorded")), "",
        "`bench/cdc/` (`python -m bench.cdc`, also `make bench-cdc`): a cdc_table (keys `key`, "
        "sequence_by `lsn`, deletes `op = 'D'`) stored as SCD1 and as SCD2, each table and its "
        "tombstones created as the CDC path creates them and loaded in bulk with one current row per "
        f"key in {plural(result['files'], 'file')} (not measured); then {result['measured_batches']} "
        f"batches after a warm-up, each changing {result['changed_keys']} of the keys ({kinds}), "
        "through the project's streaming write and its foreachBatch function, one availableNow query per batch. Time per micro-batch (progress "
        "durationMs.triggerExecution); rows in files = rows in the data files the MERGE wrote, "
        "unchanged ones copied along; rows read = rows the batch's Spark jobs read from data files, "
        "and how many times the table's size that is:", "",
    ]
    lines += table(
        ["keys", "stored_as", "batches", "median s/batch", "max s/batch", "rows per batch",
         "rows written/batch", "rows in files/batch", "files touched/batch", "rows read/batch"],
        [[f"{row['keys']:,}", row["stored_as"], row["batches"], f"{row['median_s']:.2f}",
          f"{row['max_s']:.2f}", f"{row['rows_per_batch']:,}", f"{row['rows_written_per_batch']:,.0f}",
          f"{row['rows_in_files_per_batch']:,.0f}",
          f"{row['files_touched_per_batch']:.0f} of {row['table_files']}",
          "-" if row["rows_read_per_batch"] is None
          else f"{row['rows_read_per_batch']:,.0f} ({row['rows_read_per_batch'] / row['keys']:.1f}x)"]
         for row in rows],
    )
    lines += [
        "", "Where a batch's time goes: median seconds, and the Spark jobs each phase started "
        "(`bench/cdc/phases.py`, timed inside the same foreachBatch calls). change_rows = the batch "
        "read and checkpointed; source = what the MERGE applies (SCD1: the latest change per key "
        "against the tombstones; SCD2: the touched keys' history worked out again from their "
        "versions in the table and compared with them); MERGE = the table's, with Delta's own scan "
        "and rewrite times from its commit; tombstones = remembering the batch's deletes in the "
        "tombstones table (remember_deletes); other = the rest of "
        "foreachBatch; Spark = the micro-batch outside foreachBatch:", "",
    ]

    def phase(row: dict, name: str) -> str:
        phases = row["phases_median_s"]
        jobs = phases.get(f"{name}_jobs")
        return f"{phases[name]:.2f}" + ("" if jobs is None else f" ({plural(jobs, 'job')})")

    lines += table(
        ["keys", "stored_as", "change_rows", "source", "MERGE", "MERGE scan / rewrite (Delta)",
         "tombstones", "other", "Spark", "bulk load (not measured)"],
        [[f"{row['keys']:,}", row["stored_as"], *(phase(row, name) for name in ("change_rows", "source", "merge")),
          f"{row['merge_median']['scanTimeMs'] / 1000:.2f} / {row['merge_median']['rewriteTimeMs'] / 1000:.2f}"
          if row["merge_median"] else "-",
          *(phase(row, name) for name in ("tombstones", "other")),
          f"{row['spark_median_s']:.2f}", f"{row['load_s']:.1f}"]
         for row in rows],
    )
    lines += ["", "The tombstones' commits over the measured batches: " + "; ".join(
        f"{row['keys']:,} {row['stored_as']}: " + ", ".join(
            f"{count} {operation}" for operation, count in row.get("tombstones_commits", {}).items())
        + (f" (MERGE median: Delta's execution {row['tombstones_merge_median']['executionTimeMs'] / 1000:.2f} s, "
           f"{plural(row['tombstones_merge_median']['numTargetFilesRemoved'], 'file')} rewritten)"
           if row["tombstones_merge_median"] else "")
        for row in rows) + "."]
    lines += ["", *_cdc_reading(rows)]
    checked = all(not check["problems"] for check in result["checks"])
    lines += ["", "After the last batch both tables hold what the feed says (rows, current rows, sum of "
              "the current rows' lsn, no version ending before it starts): " + ("yes" if checked else "NO"), ""]
    return lines + ["```", result["summary"], "```", ""]


def _cdc_reading(rows: list[dict]) -> list[str]:
    """What the largest size's figures say, in a sentence per stored_as."""
    largest = max(row["keys"] for row in rows)
    said = []
    for row in (row for row in rows if row["keys"] == largest and row["merge_median"]):
        phases, merge = row["phases_median_s"], row["merge_median"]
        held = max(("change_rows", "source", "merge", "tombstones"), key=lambda name: phases[name])
        every_file = row["files_touched_per_batch"] >= row["table_files"]
        said.append(
            f"- At {largest:,} keys, {row['stored_as']}: of {phases['foreach_batch']:.2f} s in foreachBatch the "
            f"largest phase is {held} ({phases[held]:.2f} s); the table's MERGE rewrote "
            f"{row['rows_in_files_per_batch']:,.0f} rows to change {row['rows_written_per_batch']:,.0f} "
            f"({row['files_touched_per_batch']:.0f} of {row['table_files']} files"
            + (": keys changed at random fall in every file" if every_file else "") + f"), Delta's rewrite {merge['rewriteTimeMs'] / 1000:.2f} s; the batch read "
            + ("-" if row["rows_read_per_batch"] is None else f"{row['rows_read_per_batch'] / row['keys']:.1f}")
            + " times the table's rows.")
    return said
