"""Opening one new judge cache from several workers at once (Dask workers on one host do)."""

from __future__ import annotations

import threading

from ragmeter.judge.cache import SCHEMA_VERSION, JudgeCache


def test_workers_opening_a_new_cache_at_once_all_succeed(tmp_path):
    # Each thread has its own connection, as each worker process does; SQLite releases the GIL,
    # so the opens really overlap. Before the fix about one trial in 20 failed, either on the
    # schema-version insert (UNIQUE constraint) or on the switch to WAL (database is locked):
    # 100 trials failed in each of three runs.
    for trial in range(100):
        path = tmp_path / f"c{trial}.sqlite"
        barrier = threading.Barrier(6)
        errors: list[BaseException] = []

        def open_it(path=path, barrier=barrier, errors=errors) -> None:
            barrier.wait()
            try:
                JudgeCache(path).close()
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        cache = JudgeCache(path)
        assert cache.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert cache.db.execute("SELECT v FROM meta WHERE k='schema_version'").fetchall() == [
            (SCHEMA_VERSION,)
        ]
        cache.close()


def test_a_cache_whose_folder_cannot_be_made_is_one_line(tmp_path):
    import pytest

    from ragmeter.errors import InputError

    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = blocker / "sub" / "c.sqlite"
    with pytest.raises(InputError) as err:
        JudgeCache(path)
    assert str(err.value).startswith(f"{path}: cannot create the judge cache (")
    assert str(err.value).endswith("; expected a path in a writable folder, set with --cache)")
