"""The project's own listings of a growing folder, on the S3 API and on local disk: `python -m bench.folder_listing`."""
