"""What the operator decided when starting ``ragmeter mcp``; tool arguments never change it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ragmeter.errors import UsageError
from ragmeter.mcp.paths import Roots

__all__ = ["Settings"]


@dataclass
class Settings:
    """Server-side configuration shared by every tool call.

    ``clock`` gives the local time of UltraRAG's timestamped file names (injectable in tests).
    ``judge_max_cost`` is the operator's cap per ``run`` call; a client may only lower it.
    """

    roots: Roots = field(default_factory=Roots)
    ultrarag: bool = False
    read_only: bool = False
    config: Path | None = None
    store: str | None = None
    judge_max_cost: float = 0.0
    max_rows: int = 1000
    clock: Callable[[], datetime] = datetime.now
    _config_data: dict[str, Any] | None = field(default=None, repr=False)

    def refuse_write(self, tool: str, what: str) -> None:
        """Under ``--read-only``, a one-line tool error naming the argument that would write."""
        if self.read_only:
            raise UsageError(
                f"{tool}: {what} writes files and this server runs with --read-only",
                command="mcp",
            )

    def config_data(self) -> dict[str, Any]:
        """The ``--config`` file as a mapping (empty without one), read once."""
        if self._config_data is None:
            self._config_data = {}
            if self.config is not None:
                from ragmeter.io.yamlmap import load_yaml

                data, _lines = load_yaml(os.fspath(self.config))
                self._config_data = dict(data or {})
        return self._config_data

    def store_url(self) -> str:
        """``--store``, else the config's ``store:``, else the SQLite file under the first root."""
        if self.store:
            return self.store
        configured = self.config_data().get("store")
        if isinstance(configured, str) and configured:
            return configured
        return f"sqlite:///{self.roots.first / '.ragmeter' / 'ragmeter.db'}"
