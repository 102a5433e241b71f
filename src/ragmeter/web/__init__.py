"""The local dashboard (``docs/dashboard.md``, "The dashboard"): ``ragmeter serve``, a read-only
web app over the results store. Needs ``ragmeter[web]`` (Starlette, uvicorn); importing this
package does not import them, :func:`create_app` does.

The templates it shares with the HTML report live in ``ragmeter/report/templates``; its own in
``templates/``; the chart library and stylesheet in ``static/`` (vendored, never from a CDN).
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def create_app(store: Any = None, **options: Any) -> Any:
    """The dashboard's Starlette app over a store URL or :class:`~ragmeter.store.Store`."""
    from ragmeter.web.app import create_app as make

    return make(store, **options)
