"""Headless Chromium, one per test process, driven over the DevTools protocol on a pipe.

Starting Chromium costs about a second, and the tests load some thirty pages; a page in a running browser costs
a tenth of that.  :func:`dom` opens a URL in a new tab of a given size, lets its scripts run for 5 s of virtual
time (what ``--virtual-time-budget=5000`` does for ``chromium --headless --dump-dom``: timers are fast-forwarded,
nothing waits in real time) and returns the DOM the page ends with.  The protocol: JSON messages ending in a NUL
byte, written to the browser's fd 3 and read from its fd 4 (``--remote-debugging-pipe``).
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run")
#: the virtual time a page's scripts get, in ms; and the real time a page may take, in s
BUDGET_MS, DEADLINE_S = 5000, 120


class _Browser:
    def __init__(self):
        assert CHROMIUM, "chromium is not installed (apt-get install chromium; .ci/run installs it)"
        self.profile = tempfile.mkdtemp(prefix="symparams-chromium-")
        commands_r, self.commands = os.pipe()
        self.replies, replies_w = os.pipe()
        # above fd 4, so that putting one end at 3 or 4 in the child cannot close the other
        commands_r, replies_w = (_above_four(fd) for fd in (commands_r, replies_w))
        # bash (dash takes one-digit descriptors only) puts the pipes at fds 3 and 4, where
        # --remote-debugging-pipe expects them, then becomes Chromium
        shell = f'exec "$0" "$@" 3<&{commands_r} 4>&{replies_w} {commands_r}<&- {replies_w}>&-'
        self.process = subprocess.Popen(
            ["bash", "-c", shell, CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe"],
            pass_fds=(commands_r, replies_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(commands_r)
        os.close(replies_w)
        self.next_id, self.buffer, self.events = 0, b"", []

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.commands)
        os.close(self.replies)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self.buffer:
            ready, _, _ = select.select([self.replies], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self.replies, 1 << 20) if ready else b""
            assert chunk, "chromium stopped answering" if ready else "chromium took too long"
            self.buffer += chunk
        text, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(text)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + DEADLINE_S
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self.next_id:
                assert "error" not in reply, (method, reply["error"])
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            found = [i for i, e in enumerate(self.events)
                     if e.get("method") == method and e.get("sessionId") == session]
            if found:
                del self.events[:found[0] + 1]  # that event and those before it
                return
            self.events.append(self._message(deadline))

    def dom(self, url: str, width: int, height: int) -> str:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
            self.send("Page.enable", {}, session)
            self.send("Page.navigate", {"url": url}, session)
            self.wait_for("Page.loadEventFired", session)
            # loaded: its timers get the budget, fast-forwarded (a budget set before the page came would be spent
            # on about:blank)
            self.send("Emulation.setVirtualTimePolicy",
                      {"policy": "pauseIfNetworkFetchesPending", "budget": BUDGET_MS}, session)
            self.wait_for("Emulation.virtualTimeBudgetExpired", session)
            found = self.send("Runtime.evaluate", {"expression": "document.documentElement.outerHTML",
                                                   "returnByValue": True}, session)
            return found["result"]["value"]
        finally:
            self.send("Target.closeTarget", {"targetId": target})


def _above_four(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


_browser: _Browser | None = None


def dom(url: str, width: int = 800, height: int = 600) -> str:
    """The DOM ``url`` ends with in a ``width`` × ``height`` viewport, once its scripts had 5 s of virtual time."""
    global _browser
    if _browser is None or _browser.process.poll() is not None:
        _browser = _Browser()
        atexit.register(_browser.close)
    return _browser.dom(url, width, height)
