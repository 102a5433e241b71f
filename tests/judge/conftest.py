"""Fixtures of the judge tests: the fake OpenAI server, no network, no developer keys."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.judge.fake_openai import SENTINEL_KEY, FakeOpenAI

ENV_VARS = (
    "OPENAI_API_KEY",
    "RAGMETER_LLM_BASE_URL",
    "RAGMETER_LLM_MODEL",
    "RAGMETER_JUDGE_CACHE",
    "RAGMETER_PRICES",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


def _loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return True  # AF_UNIX paths and the like
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return not isinstance(address, tuple)  # a unix socket path


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Block every connection that does not go to a loopback address."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise OSError(f"network access blocked in tests: {address!r}")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
            raise OSError(f"network access blocked in tests: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's keys or settings; the default cache lands in tmp_path."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    fake_server.reset()
    yield fake_server
    fake_server.release()
    fake_server.reset()


@pytest.fixture
def judge_env(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment of a configured judge pointing at the fake server, with the sentinel key."""
    env = {
        "RAGMETER_LLM_BASE_URL": fake.url,
        "RAGMETER_LLM_MODEL": "judge-test-model",
        "OPENAI_API_KEY": SENTINEL_KEY,
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


@pytest.fixture
def make_config(fake: FakeOpenAI, tmp_path: Path):
    """``make_config(**settings)`` → a JudgeConfig for the fake server (sentinel key)."""
    from ragmeter.judge.config import resolve_config

    def make(**settings: Any):
        flags = {
            "base_url": fake.url,
            "model": "judge-test-model",
            "cache_path": str(tmp_path / "cache.sqlite"),
            "timeout_s": 5.0,
        }
        flags.update(settings)
        return resolve_config(flags, environ={"OPENAI_API_KEY": SENTINEL_KEY})

    return make
