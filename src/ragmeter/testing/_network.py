"""``ragmeter_block_network = true``: no connection leaves the machine during the session.

``socket.socket.connect`` (and ``connect_ex``) to an address that is not loopback raises, naming
the address and the running test, so a CI job can prove that an evaluation is offline. Unix
sockets and loopback stay open (a local judge server or PostgreSQL cluster in tests).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from typing import Any

__all__ = ["block_network"]


def _loopback(host: Any) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # a host name would need a DNS lookup: that is network already


def block_network(current_test: Callable[[], str | None]) -> Callable[[], None]:
    """Install the guard; returns the function that removes it."""
    original = socket.socket.connect
    original_ex = socket.socket.connect_ex

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return
        host = address[0] if isinstance(address, tuple) else address
        if not _loopback(host):
            where = current_test()
            raise OSError(
                f"ragmeter_block_network: connection to {address!r} blocked"
                + (f" in {where}" if where else "")
                + " (the session allows loopback only)"
            )

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return original(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return original_ex(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]

    def restore() -> None:
        socket.socket.connect = original  # type: ignore[method-assign]
        socket.socket.connect_ex = original_ex  # type: ignore[method-assign]

    return restore
