"""Headless Chromium (Debian's chromium) opening a local HTML file as a person would, for the plot
suite: what its console said, every request the page made, where each image landed on the page,
and a screenshot of the whole page. One Chromium serves every visit of a suite: it is driven over
the DevTools protocol on a pipe (--remote-debugging-pipe: no port is opened), each visit in a new
tab of its own, closed after it. Chromium's own background requests (updates, sync) are turned off,
and any that remain go to a proxy on a closed loopback port: no packet leaves this machine."""
import atexit
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
         "--disable-extensions", "--disable-features=Translate,MediaRouter,OptimizationHints,SpellcheckService",
         "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--force-device-scale-factor=1",
         "--hide-scrollbars"]

# Run in the page once its load event has fired: each image's place and whether it decoded, and
# the page's and the window's size. The page itself is not changed.
MEASURE = """(() => {
  const images = [...document.images].map(image => {
    const box = image.getBoundingClientRect();
    return {id: (image.closest("figure") || {}).id || "", decoded: image.complete && image.naturalWidth > 0,
            x: box.left + scrollX, y: box.top + scrollY, width: box.width, height: box.height};
  });
  return {images, height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
          viewport: innerWidth, viewport_height: innerHeight};
})()"""

# The window a visit measures its page in; a taller page is shot again at its own height (at most
# MAX_HEIGHT pixels).
VISIT_HEIGHT = 6000
MAX_HEIGHT = 30000
LIMIT = 90  # seconds any one step of a visit may take


def binary():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Visit:
    """What one load of a page showed: `console` lines, `requests` (URLs the page asked for other
    than itself), `screenshot` (a PNG path) and `layout` (MEASURE's findings)."""

    def __init__(self):
        self.console, self.requests, self.screenshot, self.layout = [], [], None, None


class Chromium:
    """One headless Chromium driven over --remote-debugging-pipe (fd 3 its commands, fd 4 its
    answers and events, each a JSON message ended by a NUL byte)."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="testio-browser-")
        to_chromium, self._commands = os.pipe()
        self._answers, from_chromium = os.pipe()
        # Chromium reads fd 3 and writes fd 4: the pipe's ends go there in the child, by way of
        # descriptors above both (either end may be 3 or 4 already), left open across exec (Python
        # opens every other descriptor close-on-exec).
        def place_pipes():
            reads, writes = fcntl.fcntl(to_chromium, fcntl.F_DUPFD, 10), fcntl.fcntl(from_chromium, fcntl.F_DUPFD, 10)
            os.dup2(reads, 3)
            os.dup2(writes, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([binary(), *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
                                         "about:blank"], stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=self.log, close_fds=False, preexec_fn=place_pipes)
        os.close(to_chromium)
        os.close(from_chromium)
        self._buffer, self._next_id, self.events = b"", 0, []

    def _stderr(self):
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-1500:]

    def _message(self, deadline):
        """The next message from Chromium, waiting until `deadline` (time.monotonic())."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                raise RuntimeError(f"chromium did not answer in time: {self._stderr()}")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise RuntimeError(f"chromium closed its pipe (exit {self.process.poll()}): {self._stderr()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, session=None, **params):
        """Sends a command and returns its result; events that come meanwhile are kept in .events."""
        self._next_id += 1
        command = {"id": self._next_id, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        data = json.dumps(command).encode() + b"\0"
        while data:
            data = data[os.write(self._commands, data):]
        deadline = time.monotonic() + LIMIT
        while True:
            message = self._message(deadline)
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"chromium refused {method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_for(self, method, session, deadline):
        """The first event `method` of `session`, from those kept or those to come."""
        while True:
            for index, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(index)
            self.events.append(self._message(deadline))

    def close(self):
        if self.process.poll() is None:
            try:
                self.send("Browser.close")
            except (RuntimeError, OSError):
                pass
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        for descriptor in (self._commands, self._answers):
            try:
                os.close(descriptor)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


_shared = []


def chromium():
    """The suite's one Chromium, started at the first visit (and again should it have died)."""
    if _shared and _shared[0].process.poll() is not None:
        _shared.pop().close()
    if not _shared:
        _shared.append(Chromium())
        atexit.register(close)
    return _shared[0]


def close():
    """Ends the shared Chromium, if one runs."""
    while _shared:
        _shared.pop().close()


def _console_line(event):
    """A console message or uncaught exception of the page, as one line; None for other events."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled":
        words = [str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", [])]
        return f"console.{params.get('type')}: {' '.join(words)}"
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        return f"exception: {details.get('exception', {}).get('description') or details.get('text')}"
    if method == "Log.entryAdded":
        entry = params.get("entry", {})
        return f"{entry.get('source')} {entry.get('level')}: {entry.get('text')} {entry.get('url', '')}".strip()
    return None


def _load(page, width, height):
    """Opens `page` in a new tab whose viewport is `width` x `height`; (browser, session, target,
    its layout) once the load event has fired."""
    browser = chromium()
    target = browser.send("Target.createTarget", url="about:blank")["targetId"]
    session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.send(f"{domain}.enable", session)
    browser.send("Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1,
                 mobile=False)
    browser.send("Page.navigate", session, url=f"file://{page}")
    browser.wait_for("Page.loadEventFired", session, time.monotonic() + LIMIT)
    return browser, session, target, _evaluate(browser, session, MEASURE)


def _evaluate(browser, session, expression):
    done = browser.send("Runtime.evaluate", session, expression=expression, returnByValue=True, awaitPromise=True)
    if "exceptionDetails" in done:
        raise RuntimeError(f"chromium could not measure the page: {done['exceptionDetails']}")
    return done["result"]["value"]


def _close_tab(browser, session, target):
    """Closes the tab; the events it left: (console lines, URLs requested)."""
    browser.send("Target.closeTarget", targetId=target)
    mine = [event for event in browser.events if event.get("sessionId") == session]
    browser.events = []  # one tab at a time: nothing kept concerns a later visit
    console = [line for line in map(_console_line, mine) if line is not None]
    requests = [event["params"]["request"]["url"] for event in mine
                if event.get("method") == "Network.requestWillBeSent"]
    return console, requests


def measure(page, width):
    """MEASURE's findings for `page` in a window `width` pixels wide."""
    browser, session, target, layout = _load(page, width, 900)
    _close_tab(browser, session, target)
    return layout


def visit(page, screenshot, width=1100):
    """Opens `page`: its console, its requests (the page itself and data: URLs left out), its layout, and a
    screenshot of the whole page at `width`, saved as `screenshot`."""
    result = Visit()
    browser, session, target, result.layout = _load(page, width, VISIT_HEIGHT)
    try:
        if result.layout["height"] > result.layout["viewport_height"]:
            height = min(int(result.layout["height"]), MAX_HEIGHT)
            browser.send("Emulation.setDeviceMetricsOverride", session, width=width, height=height,
                         deviceScaleFactor=1, mobile=False)
            # The same page at its own height: measured again, as the shot shows it.
            result.layout = _evaluate(browser, session, MEASURE)
        shot = browser.send("Page.captureScreenshot", session, format="png")
        with open(screenshot, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
    finally:
        console, requests = _close_tab(browser, session, target)
    result.console = console
    # A data: URL is the page's own bytes (the plots are embedded so), not a request for anything.
    result.requests = [url for url in requests if url != f"file://{page}" and not url.startswith("data:")]
    result.screenshot = screenshot
    return result
