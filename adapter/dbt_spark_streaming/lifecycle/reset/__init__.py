"""Checkpoint reset: keep a model's table, and start its next run reading from a version, a
timestamp or the latest offsets (checkpoint_reset.py). Part of lifecycle/: it imports what
lifecycle/ may.
"""
