"""The store under hostile conditions: foreign databases, damaged files, read-only locations,
full disks, missing privileges, unreachable servers (docs/runner.md, "The results store").

Reading commands must change nothing and every failure is one line with exit status 2; a write
that fails leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter.errors import UsageError
from ragmeter.runner.evaluation import EvaluationResult
from ragmeter.store import open_store
from tests.helpers import invoke, require_system
from tests.runner import toy
from tests.runner.test_store import make_result, make_run

READING = [
    ("runs", "list"),
    ("runs", "show", "latest"),
    ("runs", "export", "latest"),
    ("gate", "latest", "--rule", "answers.em>=0.1"),
    ("report", "latest", "-o", "{tmp}/report.html"),
    ("compare", "latest", "e2"),
    ("serve", "--port", "{port}"),
]


def _command(args: tuple[str, ...]) -> str:
    return " ".join(args[:2]) if args[0] == "runs" else args[0]


def _free_port() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _args(args: tuple[str, ...], tmp: Path) -> list[str]:
    return [a.format(tmp=tmp, port=_free_port()) for a in args]


def _one_line_error(res, command: str, *needles: str) -> None:  # type: ignore[no-untyped-def]
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.startswith(f"ragmeter {command}: "), res.stderr
    for needle in needles:
        assert needle in res.stderr, res.stderr


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sqlite_state(path: Path) -> tuple[list[str], str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")]
        return tables, conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()


def _app_db(path: Path) -> Path:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    return path


def _judge_cache(path: Path) -> Path:
    from ragmeter.judge.cache import JudgeCache

    cache = JudgeCache(path)
    cache.close()
    return path


def _store_with_runs(path: Path) -> Path:
    with open_store(path) as store:
        store.write([make_run("e1-a"), make_run("e1-b", system="dense")])
        store.write([make_run("e2-a"), make_run("e2-b", system="dense")])
    return path


# -- item 6: reading commands on a database that is not a store ------------------------------
@pytest.mark.parametrize("kind", ["app", "judge-cache", "empty"])
@pytest.mark.parametrize("args", READING, ids=lambda a: "-".join(a[:2]))
def test_reading_commands_never_alter_a_foreign_sqlite_database(tmp_path, kind, args):
    path = tmp_path / "other.db"
    if kind == "app":
        _app_db(path)
    elif kind == "judge-cache":
        _judge_cache(path)
    else:
        path.write_bytes(b"")
    before, state = _digest(path), _sqlite_state(path)
    res = invoke(*_args(args, tmp_path), "--store", str(path))
    _one_line_error(res, _command(args), "is not a ragmeter results store")
    assert _digest(path) == before
    assert _sqlite_state(path) == state  # no new table, journal mode not switched to WAL
    assert not (tmp_path / "report.html").exists()


def test_the_messages_say_what_the_database_is(tmp_path):
    app = _app_db(tmp_path / "app.db")
    res = invoke("runs", "list", "--store", str(app))
    assert res.stderr == (
        f"ragmeter runs list: the store sqlite:///{app} is not a ragmeter results store (it has "
        "tables users but no ragmeter_meta; expected a ragmeter store or an empty database)\n"
    )
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    res = invoke("report", "latest", "--store", str(empty))
    assert res.stderr == (
        f"ragmeter report: the store sqlite:///{empty} is not a ragmeter results store (the "
        "database is empty; ragmeter run creates the store)\n"
    )


@pytest.mark.parametrize("args", READING, ids=lambda a: "-".join(a[:2]))
def test_reading_commands_never_alter_a_foreign_postgresql_database(pg_url, tmp_path, args):
    import psycopg

    plain = pg_url.replace("+psycopg", "")

    def tables() -> list[str]:
        with psycopg.connect(plain) as c:
            rows = c.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    res = invoke(*_args(args, tmp_path), "--store", pg_url)
    _one_line_error(res, _command(args), "is not a ragmeter results store (the database is empty")
    assert tables() == []
    with psycopg.connect(plain) as c:
        c.execute("CREATE TABLE users (id int)")
    res = invoke(*_args(args, tmp_path), "--store", pg_url)
    _one_line_error(res, _command(args), "(it has tables users but no ragmeter_meta")
    assert tables() == ["users"]


def test_a_write_never_gives_a_foreign_database_the_schema(tmp_path):
    """ragmeter run (and the library) create a store only in an empty database."""
    path = _app_db(tmp_path / "app.db")
    state = _sqlite_state(path)
    with pytest.raises(UsageError, match="is not a ragmeter results store"):
        open_store(path)
    assert _sqlite_state(path) == state


# -- item 8: damaged stores, folders, unreachable servers --------------------------------------
def _damaged(tmp: Path, kind: str) -> tuple[str, str]:
    """A store URL of the given kind and the words its one-line error must contain."""
    path = tmp / f"{kind}.db"
    if kind == "text":
        path.write_text("run,system\n1,bm25\n")
        return str(path), "is not a ragmeter results store (not a SQLite file"
    if kind == "garbage":
        path.write_bytes(bytes(range(256)) * 40)
        return str(path), "is not a ragmeter results store (not a SQLite file"
    if kind == "folder":
        path.mkdir()
        return str(path), "is a folder (expected a SQLite file"
    if kind == "corrupt":
        _store_with_runs(path)
        data = bytearray(path.read_bytes())
        data[4096:-4096] = b"\xff" * (len(data) - 8192)
        path.write_bytes(bytes(data))
        return str(path), "is damaged (database disk image is malformed)"
    if kind == "abc":
        _store_with_runs(path)
        conn = sqlite3.connect(path)
        conn.execute("UPDATE ragmeter_meta SET value = 'abc' WHERE key = 'schema_version'")
        conn.commit()
        conn.close()
        return str(path), "is damaged: schema_version 'abc' in ragmeter_meta is not a schema"
    assert kind == "unreachable"
    return (
        f"postgresql://ragmeter:secret@127.0.0.1:{_closed_port()}/x",
        "cannot connect to the store postgresql+psycopg://ragmeter:***@127.0.0.1:",
    )


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # nothing listens once the socket is closed


DAMAGED = ["text", "garbage", "folder", "corrupt", "abc", "unreachable"]


@pytest.mark.parametrize("kind", DAMAGED)
@pytest.mark.parametrize("args", [*READING, ("run", "{tmp}/ragmeter.yaml", "--quiet")])
def test_a_damaged_or_unreachable_store_is_one_line(tmp_path, monkeypatch, kind, args):
    if kind == "unreachable":
        pytest.importorskip("psycopg")
    url, needle = _damaged(tmp_path, kind)
    if args[0] == "run":
        toy.install()
        monkeypatch.chdir(tmp_path)
        toy.write_project(tmp_path)
    try:
        res = invoke(*_args(args, tmp_path), "--store", url)
    finally:
        if args[0] == "run":
            toy.uninstall()
    _one_line_error(res, _command(args), needle)
    assert "secret" not in res.stderr
    assert not (tmp_path / "results").exists()  # run: checked before any work


# -- item 8: a store on a read-only location is read ------------------------------------------
@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make ``folder`` read-only for this process: permissions for a normal user, a read-only
    bind mount for root (whom permissions do not stop)."""
    if os.geteuid() != 0:
        files = [p for p in folder.iterdir() if p.is_file()]
        for p in files:
            p.chmod(0o444)
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
            for p in files:
                p.chmod(0o644)
        return
    ok = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if ok.returncode != 0:
        require_system(False, f"cannot bind-mount a read-only folder: {ok.stderr.decode()}")
    try:
        ro = subprocess.run(
            ["mount", "-o", "remount,ro,bind", str(folder)], capture_output=True, text=True
        )
        if ro.returncode != 0:
            require_system(False, f"cannot remount read-only: {ro.stderr}")
        yield
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.fixture
def ro_store(tmp_path) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = _store_with_runs(folder / "store.db")
    assert _sqlite_state(path)[1] == "wal"
    with read_only(folder):
        with pytest.raises(OSError):
            (folder / "probe").write_text("x")
        yield path


def test_a_store_on_a_read_only_location_can_be_read(ro_store, tmp_path):
    listed = invoke("runs", "list", "--json", "--store", str(ro_store))
    assert listed.code == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)] == ["e2-b", "e2-a", "e1-b", "e1-a"]
    shown = invoke("runs", "show", "e1-a", "--json", "--store", str(ro_store))
    assert shown.code == 0 and json.loads(shown.stdout)["run"]["system"] == "bm25"
    exported = invoke("runs", "export", "e2", "--store", str(ro_store))
    assert [r["run"]["id"] for r in json.loads(exported.stdout)] == ["e2-a", "e2-b"]
    gate = invoke("gate", "e2-a", "--rule", "answers.em>=0.1", "--store", str(ro_store))
    assert gate.code == 0, gate.stderr
    out = tmp_path / "report.html"
    report = invoke("report", "e2", "-o", str(out), "--store", str(ro_store))
    assert report.code == 0, report.stderr
    assert "e2-b" in out.read_text()
    compare = invoke("compare", "e1-a", "e2-a", "-m", "answers.em", "--store", str(ro_store))
    assert compare.code == 0, compare.stderr


def test_run_on_a_read_only_store_is_one_line_before_any_work(ro_store, tmp_path, monkeypatch):
    toy.install()
    try:
        monkeypatch.chdir(tmp_path)
        config = toy.write_project(tmp_path)
        res = invoke("run", str(config), "--quiet", "--store", str(ro_store))
    finally:
        toy.uninstall()
    _one_line_error(res, "run", f"the store sqlite:///{ro_store} is read-only", "nothing was")
    assert toy.ToyAdapter.calls == 0
    assert not (tmp_path / "results").exists()


# -- item 7: write failures roll back and are one line -----------------------------------------
def test_a_full_disk_rolls_the_write_back(tmp_path):
    """The file size limit stands in for a full disk: SQLite's write fails half-way."""
    path = tmp_path / "full.db"
    store = open_store(path)
    store.write([make_run("e1-a")])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    limit = 256 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
        with pytest.raises(UsageError) as exc:
            store.write([make_run("e2-a", result=make_result(20_000))])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    message = str(exc.value)
    assert message.startswith(f"the store sqlite:///{path}")
    assert message.endswith("; nothing was written")
    assert "disk is full" in message or "disk I/O error" in message
    store.close()
    with open_store(path) as again:
        assert [r["id"] for r in again.list_runs()] == ["e1-a"]
        with again.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"


def test_a_postgresql_role_without_rights(pg_cluster, pg_url):
    import psycopg

    owner = pg_url.replace("+psycopg", "")
    with open_store(pg_url) as store:
        store.write([make_run("e1-a")])
    role = f"reader_{os.getpid()}"
    with psycopg.connect(owner, autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN")
        c.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    reader = pg_url.replace("//ragmeter@", f"//{role}@")
    shown = reader.replace("postgresql+psycopg", "postgresql+psycopg")
    with open_store(reader) as store:  # reading is allowed, writing is not
        with pytest.raises(UsageError) as exc:
            store.write([make_run("e2-a")])
        assert [r["id"] for r in store.list_runs()] == ["e1-a"]
    assert str(exc.value) == (
        f"cannot write to the store {shown} (permission denied for table runs); nothing was written"
    )
    # a role that may not create tables cannot make a new store either
    fresh = pg_cluster.new_database().replace("//ragmeter@", f"//{role}@")
    with psycopg.connect(owner, autocommit=True) as c:
        c.execute(f"REVOKE CREATE ON SCHEMA public FROM {role}")
    with pytest.raises(UsageError, match=r"^cannot write to the store .*permission denied"):
        open_store(fresh)


@pytest.mark.parametrize("blocker", ["file", "read-only"])
def test_a_results_folder_that_cannot_be_written(tmp_path, monkeypatch, blocker):
    toy.install()
    try:
        monkeypatch.chdir(tmp_path)
        config = toy.write_project(tmp_path)
        store = tmp_path / "store.db"
        if blocker == "file":
            results = tmp_path / "results-file"
            results.write_text("not a folder")
            res = invoke(
                "run", str(config), "--quiet", "--store", str(store), "--results-dir", str(results)
            )
        else:
            results = Path(tempfile.mkdtemp(dir=tmp_path))
            with read_only(results):
                res = invoke(
                    "run",
                    str(config),
                    "--quiet",
                    "--store",
                    str(store),
                    "--results-dir",
                    str(results),
                )
    finally:
        toy.uninstall()
    if blocker == "file":  # the output check every command shares (docs/conventions.md)
        assert (res.code, res.stderr) == (
            2,
            f"{results}: is a file (expected a folder for --results-dir)\n",
        )
    else:
        _one_line_error(res, "run", f"cannot write the results folder {results}")
    assert toy.ToyAdapter.calls == 0  # found before any work
    assert not store.exists()


def test_a_results_folder_that_fails_during_the_save(tmp_path, monkeypatch):
    """The check before the work passed, the save itself fails: no store rows, no folder."""
    toy.install()
    try:
        monkeypatch.chdir(tmp_path)
        config = toy.write_project(tmp_path)
        store = tmp_path / "store.db"

        def full(self, folder, *args):  # type: ignore[no-untyped-def]
            (folder / "summary.json").write_text("{")  # half-written, then the disk is full
            raise OSError(28, "No space left on device", str(folder / "samples.parquet"))

        monkeypatch.setattr(EvaluationResult, "_write_files", full)
        res = invoke("run", str(config), "--quiet", "--store", str(store))
    finally:
        toy.uninstall()
    _one_line_error(
        res,
        "run",
        "cannot write the results folder results: No space left on device",
        "nothing was written",
    )
    assert not list((tmp_path / "results").iterdir())  # the temporary folder is removed
    listed = invoke("runs", "list", "--json", "--store", str(store))
    assert (listed.code, json.loads(listed.stdout)) == (0, [])


def test_reading_commands_read_a_postgresql_store_in_read_only_sessions(pg_url, tmp_path):
    import psycopg

    with open_store(pg_url) as store:
        store.write([make_run("e1-a"), make_run("e1-b", system="dense")])
    listed = invoke("runs", "list", "--json", "--store", pg_url)
    assert listed.code == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)] == ["e1-b", "e1-a"]
    out = tmp_path / "r.html"
    assert invoke("report", "e1", "-o", str(out), "--store", pg_url).code == 0
    assert "e1-b" in out.read_text()
    # the sessions the reading commands open refuse writes
    from sqlalchemy import text

    with (
        open_store(pg_url, readonly=True) as store,
        store.engine.connect() as conn,
        pytest.raises(Exception, match="read-only transaction"),
    ):
        conn.execute(text("DELETE FROM runs"))
    with psycopg.connect(pg_url.replace("+psycopg", "")) as c:
        assert c.execute("SELECT count(*) FROM runs").fetchone() == (2,)
