"""How a judge call fails, as the runtime classifies it (docs/judge.md, "Concurrency, rate
limits, retries"); raised by the client and its HTTP transport."""

from __future__ import annotations

__all__ = ["FatalJudgeError", "ReplyTooLarge", "RequestRejected", "TransientError"]


class TransientError(Exception):
    """A failure worth retrying: ``kind`` is timeout, connection, rate_limit, server or
    bad_reply (an HTTP-200 body that is not a chat completion: an endpoint fault)."""

    def __init__(self, kind: str, retry_after: float | None = None, label: str = "") -> None:
        self.kind = kind
        self.retry_after = retry_after
        self.label = label or kind
        super().__init__(self.label)


class RequestRejected(Exception):
    """HTTP 400/413/422 for this sample's request: the sample becomes ``refused``."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"HTTP {status}: {message}")


class FatalJudgeError(Exception):
    """Every further call would fail the same way (401, 403, 404, exhausted quota): stop."""


class ReplyTooLarge(Exception):
    """The HTTP-200 body passed ``limit`` bytes; the rest was not read."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"reply_too_large: the reply has more than {limit} bytes")
