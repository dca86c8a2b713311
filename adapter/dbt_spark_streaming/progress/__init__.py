"""Batch progress: the live view, the progress table, the service's status file and own time.

May import: delta, jvm, config
"""
