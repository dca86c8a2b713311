"""The streaming lint: what a streaming model cannot run, found in its SQL without Spark.

May import: config
"""
