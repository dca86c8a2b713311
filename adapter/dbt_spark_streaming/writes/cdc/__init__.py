"""cdc writes: a change feed applied to a table (apply_changes.py), as SCD type 1 or 2, with
sequence ties and deletes remembered. Part of writes/: it imports what writes/ may.
"""
