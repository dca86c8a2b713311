"""Listing a landing folder once a file source has taken many files, with and without
Spark's cleanSource (`archive_to`, `delete_processed`): `python -m bench.landing_listing`."""
