"""What models read: streaming sources as temp views, their schemas, the lines they cannot read.

May import: progress, delta, jvm, config
"""
