"""Open every page of the built documentation site in headless Chromium; fail on any error.

    python scripts/check_site.py site        # after `make docs`; `make check-site` does both

The site is served over HTTP on 127.0.0.1 (the search index loads in a web worker,
which a file:// page cannot start). Chromium is driven through the DevTools protocol
over a websocket (the `websockets` package; no browser download). A page fails when it
does not load, logs a console error or an uncaught exception, or a resource it asks for
fails or answers with an HTTP error. Chromium is Debian's: `apt-get install chromium`.
Exit status: 0 when every page is clean, 1 otherwise, 2 when Chromium is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.server
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
]
PAGE_TIMEOUT = 30.0  # seconds for one page's load event
SETTLE = 0.5  # seconds after the load event, for late errors (the search worker, ...)


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def start_chromium(executable: str, profile: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start Chromium; return the process and its DevTools websocket address."""
    process = subprocess.Popen(
        [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if port_file.exists():
            lines = port_file.read_text().split()
            if len(lines) >= 2:
                return process, f"ws://127.0.0.1:{lines[0]}{lines[1]}"
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{executable} did not start its DevTools endpoint")


class DevTools:
    """A minimal DevTools-protocol client: commands to one page, and its events."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.session: str | None = None
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.socket:
            message = json.loads(raw)
            if "id" in message and message["id"] in self.pending:
                self.pending.pop(message["id"]).set_result(message)
            elif "method" in message:
                await self.events.put(message)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self.ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        future = asyncio.get_running_loop().create_future()
        self.pending[number] = future
        await self.socket.send(json.dumps(message))
        reply = await asyncio.wait_for(future, PAGE_TIMEOUT)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})


def describe(event: dict[str, Any]) -> str | None:
    """The error an event reports, or None for an event that is not one."""
    method, params = event["method"], event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        texts = [str(a.get("value", a.get("description", ""))) for a in params.get("args", [])]
        return "console." + params["type"] + ": " + " ".join(texts)
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        exception = details.get("exception", {}).get("description") or details.get("text")
        return f"uncaught exception: {exception}"
    if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        entry = params["entry"]
        return f"log error: {entry.get('text')} {entry.get('url', '')}".strip()
    if method == "Network.loadingFailed" and not params.get("canceled"):
        return f"resource failed: {params.get('errorText')}"
    if method == "Network.responseReceived":
        response = params.get("response", {})
        if response.get("status", 200) >= 400:
            return f"HTTP {response['status']}: {response.get('url')}"
    return None


async def check_pages(endpoint: str, urls: list[str]) -> dict[str, list[str]]:
    from websockets.asyncio.client import connect

    problems: dict[str, list[str]] = {}
    async with connect(endpoint, max_size=None) as socket:
        tools = DevTools(socket)
        target = await tools.send("Target.createTarget", url="about:blank")
        attached = await tools.send("Target.attachToTarget", targetId=target["targetId"],
                                    flatten=True)  # fmt: skip
        tools.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            await tools.send(f"{domain}.enable")
        for url in urls:
            while not tools.events.empty():
                tools.events.get_nowait()
            found: list[str] = []
            await tools.send("Page.navigate", url=url)
            loaded = False
            deadline = time.monotonic() + PAGE_TIMEOUT
            settle_until = None
            while True:
                now = time.monotonic()
                stop = settle_until if settle_until is not None else deadline
                if now >= stop:
                    break
                try:
                    event = await asyncio.wait_for(tools.events.get(), stop - now)
                except asyncio.TimeoutError:
                    break
                if event["method"] == "Page.loadEventFired" and settle_until is None:
                    loaded, settle_until = True, time.monotonic() + SETTLE
                problem = describe(event)
                if problem:
                    found.append(problem)
            if not loaded:
                found.append(f"no load event within {PAGE_TIMEOUT:.0f} s")
            else:
                title = await tools.send("Runtime.evaluate", expression="document.title")
                if not title.get("result", {}).get("value"):
                    found.append("the page has no title: it did not render")
            problems[url] = found
        tools.reader.cancel()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=Path("site"),
                        help="the built site (make docs)")  # fmt: skip
    parser.add_argument("--chromium", default=None, help="the browser (default: from PATH)")
    args = parser.parse_args(argv)

    executable = args.chromium or find_chromium()
    if executable is None:
        print("check_site: no Chromium found; install it with `apt-get install chromium`")
        return 2
    pages = sorted(args.site.rglob("index.html"))
    if not pages:
        print(f"check_site: no pages under {args.site}; build the site with `make docs`")
        return 1
    server, base = serve(args.site)
    with tempfile.TemporaryDirectory(prefix="kenaz-check-site-") as profile:
        process, endpoint = start_chromium(executable, Path(profile))
        try:
            folders = [page.parent.relative_to(args.site).as_posix() for page in pages]
            urls = [base if folder == "." else f"{base}{folder}/" for folder in folders]
            problems = asyncio.run(check_pages(endpoint, urls))
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
            server.shutdown()

    failed = {url: found for url, found in problems.items() if found}
    version = subprocess.run([executable, "--version"], capture_output=True, text=True).stdout
    print(f"check_site: {len(problems)} pages in {version.strip() or executable}")
    for url, found in failed.items():
        print(f"  FAIL {url}")
        for problem in found:
            print(f"       {problem}")
    print(f"check_site: {len(problems) - len(failed)} clean, {len(failed)} with errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
