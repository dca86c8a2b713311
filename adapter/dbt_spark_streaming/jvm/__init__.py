"""The JVM's handles that are not Delta's: Hadoop files, query plans, a checkpoint's logs,
MemoryStream, py4j's callback connections. With delta/ and session.py, the only modules that use py4j's handles.

May import: config
"""
