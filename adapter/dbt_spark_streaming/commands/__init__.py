"""The operations of the installed `dbt-spark-streaming` command: serve, status, stop, report,
reset-checkpoint, rollback, with dbt's own options. command_line.py (the runtime's root) parses
the command name and hands over to a module here. This room sits on top of the runtime: it may
import every other room, and no other room imports it.

May import: every room
"""
