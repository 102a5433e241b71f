"""The results store: SQLite (WAL) by default, PostgreSQL by URL (``docs/runner.md``, "The
results store").

>>> from ragmeter.store import open_store
>>> import tempfile, os
>>> store = open_store(os.path.join(tempfile.mkdtemp(), "runs.db"))
>>> store.list_runs()
[]
"""

from ragmeter.store.engine import DEFAULT_STORE, display_url, normalize_url
from ragmeter.store.records import RunRecord, SampleRecord, TaskRecord
from ragmeter.store.store import Store, open_store

__all__ = [
    "DEFAULT_STORE",
    "RunRecord",
    "SampleRecord",
    "Store",
    "TaskRecord",
    "display_url",
    "normalize_url",
    "open_store",
]
