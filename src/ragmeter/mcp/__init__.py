"""``ragmeter mcp``: ragmeter's evaluators as Model Context Protocol tools (docs/mcp.md).

Importing this package imports no SDK; :func:`serve` does, when it starts a server. The tools
are thin layers over the library, like the command line: same JSON, same one-line errors.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["serve"]


def serve(argv: Sequence[str] = ()) -> int:
    """Run ``ragmeter mcp ARGV`` in this process and return its exit status.

    The launcher that ``ragmeter mcp ultrarag-init`` writes calls
    ``serve(["--ultrarag", "--root", "."])``.
    """
    from ragmeter.mcp.command import main

    return main(list(argv))
