"""Headless Chromium (Debian's chromium) opening a local HTML file as a person would, for the plot
suite: what its console said, every request the page made (Chromium's own net log), where each
image landed on the page, and a screenshot of the whole page. Chromium's own background requests
(updates, sync) are turned off, and any that remain go to a proxy on a closed loopback port: no
packet leaves this machine."""
import json
import os
import re
import shutil
import subprocess
import tempfile

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
         "--disable-extensions", "--disable-features=Translate,MediaRouter,OptimizationHints,SpellcheckService",
         "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--force-device-scale-factor=1",
         "--hide-scrollbars", "--enable-logging=stderr", "--log-level=0"]

# Appended to a copy of the page (never to the page itself): after the load event, each image's
# place and whether it decoded, and the page's and the window's size, written (hidden) into the
# DOM that --dump-dom prints.
MEASURE = """<script>
addEventListener("load", () => {
  const images = [...document.images].map(image => {
    const box = image.getBoundingClientRect();
    return {id: (image.closest("figure") || {}).id || "", decoded: image.complete && image.naturalWidth > 0,
            x: box.left + scrollX, y: box.top + scrollY, width: box.width, height: box.height};
  });
  const found = {images, height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth,
                 viewport: innerWidth, viewport_height: innerHeight};
  const out = document.createElement("pre");
  out.id = "testio-measure";
  out.hidden = true;
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});
</script>"""


def binary():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Visit:
    """What one load of a page showed: `console` lines, `requests` (URLs the page asked for other
    than itself), `screenshot` (a PNG path) and `layout` (MEASURE's findings)."""

    def __init__(self):
        self.console, self.requests, self.screenshot, self.layout = [], [], None, None


def _run(args, profile, limit=90):
    return subprocess.run([binary(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=limit, stdin=subprocess.DEVNULL)


# The window a visit loads its page in: one load measures the page and shoots it when it is no
# taller (a Chromium start costs some 3 CPU-seconds); a taller page is shot again at its height.
VISIT_HEIGHT = 6000


def measured_copy(page, scratch):
    """A copy of `page` in `scratch` with MEASURE before </body>; its path."""
    copy = os.path.join(scratch, "measured.html")
    with open(page, encoding="utf-8") as original, open(copy, "w", encoding="utf-8") as measured:
        measured.write(original.read().replace("</body>", MEASURE + "</body>"))
    return copy


def measurement(done):
    """MEASURE's findings from the DOM a --dump-dom run printed."""
    found = re.search(r'<pre id="testio-measure" hidden="">(.*?)</pre>', done.stdout, re.S)
    if not found:
        raise RuntimeError(f"chromium printed no measurement: {done.stderr[-600:]}")
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<"))


def measure(page, width):
    """MEASURE's findings for `page` in a window `width` pixels wide."""
    with tempfile.TemporaryDirectory(prefix="testio-browser-") as scratch:
        copy = measured_copy(page, scratch)
        return measurement(_run([f"--window-size={width},900", "--dump-dom", f"file://{copy}"],
                                os.path.join(scratch, "profile")))


def visit(page, screenshot, width=1100):
    """Opens `page` (a copy that measures itself, beside it in a scratch folder): its console,
    its requests, its layout, and a screenshot of the whole page at `width`, saved as
    `screenshot`."""
    result = Visit()
    with tempfile.TemporaryDirectory(prefix="testio-browser-") as scratch:
        copy = measured_copy(page, scratch)
        net_log = os.path.join(scratch, "net.json")
        done = _run([f"--window-size={width},{VISIT_HEIGHT}", f"--log-net-log={net_log}", "--dump-dom",
                     f"--screenshot={screenshot}", f"file://{copy}"], os.path.join(scratch, "profile"))
        result.layout = measurement(done)
        result.console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
        result.requests = page_requests(net_log, copy)
        if result.layout["height"] > result.layout["viewport_height"]:
            height = min(int(result.layout["height"]) + VISIT_HEIGHT - int(result.layout["viewport_height"]), 30000)
            _run([f"--window-size={width},{height}", f"--screenshot={screenshot}", f"file://{copy}"],
                 os.path.join(scratch, "profile"))
    result.screenshot = screenshot
    return result


def page_requests(net_log, page):
    """The URLs a file:// page made Chromium fetch, itself left out: every request job whose
    isolation key is a file:// page (Chromium's own requests have none)."""
    with open(net_log, encoding="utf-8") as file:
        log = json.load(file)
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event.get("type") != start_job or not params.get("network_isolation_key", "").startswith("file://"):
            continue
        if params.get("url") != f"file://{page}":
            urls.append(params.get("url"))
    return urls
