"""`make chaos`: kill the always-on pipeline with SIGKILL again and again, then prove nothing was lost.

The pipeline runs as a user runs it (`dbt run` served always-on, in its own process group) while
data keeps landing; the runs take turns between the two ways of serving: on_new_data (each model
run when an input commits, the service's default) and a 1-second processing-time trigger. Each kill takes down the whole process tree at a planned moment:
a random delay after start, or the instant a model's Delta table gets a new commit, which is when
the table holds a batch that its checkpoint has not yet recorded as done.
"""
