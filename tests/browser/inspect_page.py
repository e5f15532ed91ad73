#!/usr/bin/env python3
"""Opens a local page in headless Chromium and reports what a person would get.

    inspect_page.py PAGE SCREENSHOT.png SCRIPT.js

Loads PAGE (a file), waits for it to load, evaluates SCRIPT.js in it (an
expression whose value is JSON-serialisable: the facts a test asserts), takes
a screenshot and prints one JSON object on stdout:

    {"value": <the script's value>,
     "console": ["error: ...", ...],       # console.error/warn, uncaught exceptions,
                                           # log errors, alert() dialogs
     "requests": ["https://...", ...]}     # every load other than the page itself

Chromium is driven over the DevTools protocol on --remote-debugging-pipe
(fd 3 in, fd 4 out, messages ended by NUL), so it needs nothing but Debian's
chromium and python3. Exits 2 when Chromium cannot be started or does not
answer within the time limit.
"""
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

TIME_LIMIT_S = 60


class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def plumb():  # in the child: its fd 3 reads our commands, fd 4 answers
            # Copied out of the way first: the pipes may themselves be fds 3-6.
            reading, writing = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(reading, 3)
            os.dup2(writing, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--user-data-dir=" + profile, "about:blank"],
            # dup2 leaves fds 3 and 4 inheritable; close_fds would close them
            # after plumb() ran. Every other fd of ours is close-on-exec.
            close_fds=False, preexec_fn=plumb,
            # A HOME of its own: CI users may have none, or one not writable.
            env=dict(os.environ, HOME=profile, XDG_CONFIG_HOME=profile, XDG_CACHE_HOME=profile),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []  # (method, params, session) seen while waiting for answers
        self.deadline = time.monotonic() + TIME_LIMIT_S

    def _read_message(self):
        while b"\0" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_chrome], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in %d s" % TIME_LIMIT_S)
            chunk = os.read(self.from_chrome, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        mine = self.next_id
        message = {"id": mine, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read_message()
            if answer.get("id") == mine:
                if "error" in answer:
                    raise RuntimeError("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})
            if "method" in answer:
                self._note(answer)

    def _note(self, event):
        self.events.append((event["method"], event.get("params", {})))
        if event["method"] == "Page.javascriptDialogOpening":
            # Dismissed at once (the answer is not awaited): an open alert()
            # would block the page, and the report says it happened.
            self.next_id += 1
            message = {"id": self.next_id, "method": "Page.handleJavaScriptDialog",
                       "params": {"accept": False}, "sessionId": event.get("sessionId")}
            os.write(self.to_chrome, json.dumps(message).encode() + b"\0")

    def wait_for(self, method):
        for seen, params in self.events:
            if seen == method:
                return params
        while True:
            answer = self._read_message()
            if "method" in answer:
                self._note(answer)
                if answer["method"] == method:
                    return answer.get("params", {})

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def console_lines(events, page_url):
    lines, requests = [], []
    for method, params in events:
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
            text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
            lines.append("%s: %s" % (params["type"], text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            description = details.get("exception", {}).get("description") or details.get("text", "")
            lines.append("exception: %s (line %s)" % (description, details.get("lineNumber")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            lines.append("log %s: %s" % (params["entry"]["level"], params["entry"].get("text", "")))
        elif method == "Page.javascriptDialogOpening":  # alert(): markup ran as code
            lines.append("dialog: %s" % params.get("message", ""))
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if url != page_url and not url.startswith("data:"):
                requests.append(url)
    return lines, requests


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    page = pathlib.Path(sys.argv[1]).resolve()
    screenshot = pathlib.Path(sys.argv[2])
    script = pathlib.Path(sys.argv[3]).read_text()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("inspect_page: chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="inspect-page-") as profile:
        browser = Browser(chromium, profile)
        try:
            target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.call("Target.attachToTarget",
                                   {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                browser.call(domain + ".enable", session=session)
            browser.call("Emulation.setDeviceMetricsOverride",
                         {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                         session=session)
            url = page.as_uri()
            browser.call("Page.navigate", {"url": url}, session=session)
            browser.wait_for("Page.loadEventFired")
            result = browser.call("Runtime.evaluate",
                                  {"expression": script, "returnByValue": True,
                                   "awaitPromise": True}, session=session)
            if "exceptionDetails" in result:
                browser.events.append(("Runtime.exceptionThrown",
                                       {"exceptionDetails": result["exceptionDetails"]}))
            shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)
            screenshot.write_bytes(base64.b64decode(shot["data"]))
            lines, requests = console_lines(browser.events, url)
            print(json.dumps({"value": result.get("result", {}).get("value"),
                              "console": lines, "requests": requests}))
            return 0
        except (TimeoutError, EOFError, RuntimeError) as error:
            print("inspect_page: %s" % error, file=sys.stderr)
            return 2
        finally:
            browser.close()


if __name__ == "__main__":
    sys.exit(main())
