"""Running the dashboard and Debian's chromium for the browser tests and the screenshots.

Chromium is the system's ``/usr/bin/chromium`` driven by Playwright (never ``playwright
install``), headless, with a fresh profile and the flags in ``CHROMIUM_ARGS``. Every
request the page makes goes through :class:`Guard`, which lets through only the app's own
origin (or the report's own ``file://`` URL) and records anything else.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    # containers often give /dev/shm 64 MB, too little for a page's renderer: use /tmp instead
    "--disable-dev-shm-usage",
]

# the charts' canvases: how many pixels are not transparent (0 means nothing was drawn)
INKED_PIXELS_JS = """
els => els.map(el => {
  const c = el.querySelector('canvas');
  if (!c || !c.width || !c.height) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
  return n;
})
"""


def chromium_available() -> str | None:
    """Why the browser tests cannot run here, or ``None``."""
    if not (os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"{CHROMIUM} not found (Debian's chromium package; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ModuleNotFoundError:
        return "playwright is not installed (pip install --group dev, as make test does)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Run ``app`` with uvicorn on 127.0.0.1 and a free port in a thread; yield its base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, name="dashboard-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass
class Guard:
    """Routes every request of a browser context: the allowed ones go on, others are aborted
    and recorded. Dialogs (``alert``) and console errors are recorded too."""

    allowed_origin: str | None = None  # scheme://host:port
    allowed_urls: set[str] = field(default_factory=set)  # exact URLs (the report's file)
    requests: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def allowed(self, url: str) -> bool:
        if url in self.allowed_urls:
            return True
        if self.allowed_origin is None:
            return False
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == self.allowed_origin

    def route(self, route: Any) -> None:
        url = route.request.url
        self.requests.append(url)
        if self.allowed(url):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def attach(self, context: Any) -> None:
        context.route("**/*", self.route)

    def watch(self, page: Any) -> None:
        page.on("dialog", self._dialog)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))
        page.on("request", self._request)

    def _request(self, request: Any) -> None:
        # data: URLs are not routed; anything else that did not pass the router is a leak
        url = request.url
        if not url.startswith("data:") and not self.allowed(url):
            self.blocked.append(url)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)


@contextlib.contextmanager
def browser_context(**options: Any) -> Iterator[Any]:
    """A headless chromium context with a fresh, throwaway profile."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="ragmeter-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=CHROMIUM,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1280, "height": 900},
                **options,
            )
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def inked(page: Any) -> list[int]:
    """Non-transparent pixels of every chart's canvas, in page order."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-chart]')]"
        ".every(el => el.dataset.drawn === 'true' || el.dataset.error)",
        timeout=15_000,
    )
    return page.locator("[data-chart]").evaluate_all(INKED_PIXELS_JS)
