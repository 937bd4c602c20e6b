#!/usr/bin/python3
"""view_browser.py: the book view in a real browser.

    /usr/bin/python3 tools/view/view_browser.py SITE_DIR [--build-site] [--shots DIR] [--full]

Starts headless Chromium once and, through the DevTools protocol on a pipe
(--remote-debugging-pipe: no port, no network), loads pages of the site
from disk in a 1280-pixel-wide window (a laptop's): every page with
LITATTN_TESTS=full in the environment (`meson test --setup full`, which CI
runs); else three (`meson test --suite view`, or by hand), the pages most
likely to be too wide: the index (the coverage table), the bonus chapter's
page (the widest C, the timing table, the notebook's recorded charts) and
the first page of a variant other than the book's. The browser's start is
most of the cost; each page more adds a little. It fails on a page wider
than the window (the document's scrollWidth past its clientWidth: it would
scroll sideways), on any console error, uncaught exception, failed resource
load, image that did not load, or request that is not a local file; and on
a screenshot that is blank (a handful of colours): of the variant's page,
and with LITATTN_TESTS=full of the index and the first chapter's. --full
loads every page and photographs each whole. The screenshots are kept in DIR (default
SITE_DIR/../book-view-screens) to be looked at. Where Chromium is missing it reports SKIP, saying why (exit 77).
Needs only the standard library, and PIL (python3-pil, which
python3-matplotlib brings) to count colours.
"""

import base64
import glob
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import view_site  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--mute-audio", "--hide-scrollbars", "--remote-debugging-pipe",
         "--allow-file-access-from-files"]  # so that the harness can look into the pages it frames
WIDTH, HEIGHT = 1280, 1000  # a laptop's window: every page fits its width
PAGE_TIMEOUT = 20.0
MIN_COLOURS = 8


class Browser:
    """One Chromium process, spoken to over fds 3 (in) and 4 (out)."""

    def __init__(self, exe):
        self.profile = tempfile.mkdtemp(prefix="litattn-chromium-")
        to_child, self._w = os.pipe()
        self._r, from_child = os.pipe()
        a, b = os.dup(to_child), os.dup(from_child)  # above 4, so that dup2 cannot clobber them

        def fds():
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        # A process group of its own, so that close() ends every process of it at once.
        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        for fd in (to_child, from_child, a, b):
            os.close(fd)
        self.buf, self.next_id, self.events = b"", 0, []

    def send(self, method, params=None, cdp_session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if cdp_session:
            msg["sessionId"] = cdp_session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def receive(self, deadline):
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the pipe: " + self.proc.stderr.read().decode(errors="replace")[-500:])
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method, params=None, cdp_session=None, timeout=PAGE_TIMEOUT):
        want = self.send(method, params, cdp_session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self.receive(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, name, cdp_session, timeout=PAGE_TIMEOUT):
        deadline = time.monotonic() + timeout
        for k, e in enumerate(self.events):
            if e.get("method") == name and e.get("sessionId") == cdp_session:
                return self.events.pop(k)
        while True:
            msg = self.receive(deadline)
            if msg.get("method") == name and msg.get("sessionId") == cdp_session:
                return msg
            self.events.append(msg)

    def close(self):
        # Killed, not asked to close: a shutdown that saves the profile (a
        # temporary one) took seconds, and nothing is checked after it.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:  # it may be gone already
            pass
        self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


def problems_of(events, cdp_session):
    """Console errors, exceptions, failed loads and non-local requests among the events."""
    found = []
    urls = {e["params"]["requestId"]: e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"}
    for e in events:
        if e.get("sessionId") != cdp_session:
            continue
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            found.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Runtime.exceptionThrown":
            found.append("exception: " + p.get("exceptionDetails", {}).get("text", ""))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            found.append(f"log error: {p['entry'].get('text', '')} {p['entry'].get('url', '')}")
        elif m == "Network.loadingFailed":
            found.append(f"failed load ({p.get('type', '')}): {p.get('errorText', '')} {urls.get(p.get('requestId'), '')}")
        elif m == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if not url.startswith(("file:", "data:", "about:")):
                found.append(f"a request off the disk: {url}")
    return found


def chromium():
    """Debian's browser: its binary itself where it is there (the launcher
    script only adds a second of checks), else whatever is on PATH."""
    direct = "/usr/lib/chromium/chromium"
    if os.access(direct, os.X_OK):
        return direct
    return shutil.which("chromium") or shutil.which("chromium-browser")


def distinct_colours(png):
    from PIL import Image
    with Image.open(io.BytesIO(png)) as im:
        return len(set(im.convert("RGB").getdata()))


BROKEN_IMAGES = """[...document.querySelectorAll('iframe')].flatMap(f =>
  [...f.contentDocument.images].filter(i => !i.complete || i.naturalWidth === 0)
    .map(i => f.src.split('/').pop() + ': an image that did not load: ' + i.src.split('/').pop()))
  .concat([...document.querySelectorAll('iframe')].filter(f => !f.contentDocument.title)
    .map(f => f.src.split('/').pop() + ': no page (no title)'))"""

# A page wider than its window scrolls sideways: the document's scrollWidth
# against its clientWidth (the window less a scroll bar), in each frame of
# the window's width. Named with the outermost elements that stick out (an
# element inside a box that scrolls itself, a block of code, does not count).
TOO_WIDE = """[...document.querySelectorAll('iframe')].flatMap(f => {
  const d = f.contentDocument.documentElement, w = d.clientWidth;
  if (d.scrollWidth <= w) return [];
  const out = [...f.contentDocument.body.querySelectorAll('*')].filter(e =>
    e.getBoundingClientRect().right > w + 0.5 && e.parentElement.getBoundingClientRect().right <= w + 0.5)
    .slice(0, 3).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ends at '
      + Math.round(e.getBoundingClientRect().right) + ' px');
  return [f.src.split('/').pop() + ': ' + d.scrollWidth + ' px wide in a ' + w + '-px window (it scrolls sideways)'
    + (out.length ? ': ' + out.join(', ') : '')];
})"""


WIDEST = "ch03_bonus_mha_implementations.html"  # the bonus chapter's page (view_bench.CHAPTER)


def site_pages(site, every):
    """The pages to load: every page, or the index, the bonus chapter's page
    and the first page of a variant other than the book's
    (<program>.<variant>.html)."""
    pages = ["index.html"] + sorted(os.path.basename(p) for p in glob.glob(os.path.join(site, "*.html"))
                                    if os.path.basename(p) != "index.html")
    if every:
        return pages, len(pages)
    variants = [p for p in pages[1:] if p.count(".") == 2]
    return ["index.html"] + [p for p in pages if p == WIDEST] + variants[:1], len(pages)


def check_site(site, shots, full=False, pages=None, photos=None):
    """Loads the pages (every page by default); returns (problems, {what: seconds}, {page: colours}, pages).

    The pages load at once, each in an iframe of one harness page written
    to a temporary directory (one navigation, one load event, whose events
    name the page they come from); then the pages of `photos` (by default
    the index and the first chapter; every page with --full) are loaded
    alone to be photographed."""
    exe = chromium()
    pages = pages or site_pages(site, True)[0]
    photos = pages if full else (photos or pages[:2])
    os.makedirs(shots, exist_ok=True)
    harness_dir = tempfile.mkdtemp(prefix="litattn-harness-")
    harness = os.path.join(harness_dir, "all.html")
    with open(harness, "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html><title>every page</title>" + "".join(
            f'<iframe src="file://{os.path.abspath(os.path.join(site, p))}" width="{WIDTH}" height="600" '
            'style="border: 0; display: block"></iframe>'
            for p in pages))
    browser = Browser(exe)
    problems, timing, colours = [], {}, {}
    try:
        start = time.monotonic()
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        cdp_session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable", None, cdp_session)
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False}, cdp_session)
        timing["Chromium started"] = time.monotonic() - start

        def load(url):
            browser.events = [e for e in browser.events if e.get("sessionId") != cdp_session]
            nav = browser.call("Page.navigate", {"url": url}, cdp_session)
            if nav.get("errorText"):
                return [f"{url}: {nav['errorText']}"]
            browser.wait_event("Page.loadEventFired", cdp_session)
            return problems_of(browser.events, cdp_session)

        start = time.monotonic()
        problems += load("file://" + harness)
        found = browser.call("Runtime.evaluate", {"expression": BROKEN_IMAGES, "returnByValue": True}, cdp_session)
        value = found.get("result", {}).get("value")
        problems += value if isinstance(value, list) else [f"cannot look into the pages: {found}"]
        wide = browser.call("Runtime.evaluate", {"expression": TOO_WIDE, "returnByValue": True}, cdp_session)
        value = wide.get("result", {}).get("value")
        problems += value if isinstance(value, list) else [f"cannot measure the pages: {wide}"]
        timing[f"{len(pages)} pages loaded together"] = time.monotonic() - start
        for name in photos:
            start = time.monotonic()
            problems += [f"{name}: {p}" for p in load("file://" + os.path.abspath(os.path.join(site, name)))]
            shot = screenshot(browser, cdp_session, full)
            with open(os.path.join(shots, name.replace(".html", ".png")), "wb") as f:
                f.write(shot)
            colours[name] = distinct_colours(shot)
            timing[f"{name} alone, with a screenshot"] = time.monotonic() - start
    finally:
        browser.close()
        shutil.rmtree(harness_dir, ignore_errors=True)
    return problems, timing, colours, pages


def screenshot(browser, cdp_session, full):
    params = {"format": "png"}
    if full:
        size = browser.call("Page.getLayoutMetrics", None, cdp_session)["cssContentSize"]
        params.update(captureBeyondViewport=True,
                      clip={"x": 0, "y": 0, "width": WIDTH, "height": min(size["height"], 16000), "scale": 1})
    return base64.b64decode(browser.call("Page.captureScreenshot", params, cdp_session)["data"])


def main(argv):
    shots = None
    if "--shots" in argv:
        k = argv.index("--shots")
        shots, argv = argv[k + 1], argv[:k] + argv[k + 2:]
    args = [a for a in argv if not a.startswith("--")]
    full = "--full" in argv
    if not args:
        print("usage: view_browser.py SITE_DIR [--build-site] [--shots DIR] [--full]", file=sys.stderr)
        return 2
    site = args[0]
    shots = shots or os.path.join(os.path.dirname(os.path.abspath(site)), "book-view-screens")
    if not chromium():
        print("SKIP: no chromium on PATH (apt-get install chromium); the browser test needs a real browser")
        return 77
    if "--build-site" in argv:  # the site of a build directory (SITE = BUILD/book-view), built first if stale
        view_site.ensure_site(os.path.dirname(os.path.abspath(site)), site)
    if not os.path.exists(os.path.join(site, "index.html")):
        print(f"FAIL: no site at {site} (ninja -C build book-view)")
        return 1
    try:
        with open(os.path.join(site, "view.json"), encoding="utf-8") as f:
            made = json.load(f)
    except (OSError, ValueError):
        made = {}
    if "unavailable" in made:  # book_view.py --no-fail could not make the site
        print(("SKIP: " if made["skip"] else "FAIL: ") + "no site to load: " + made["unavailable"])
        return 77 if made["skip"] else 1
    every = full or os.environ.get("LITATTN_TESTS") == "full"
    if os.environ.get("LITATTN_TESTS", "") not in ("", "default", "full"):
        print(f"FAIL: LITATTN_TESTS is {os.environ['LITATTN_TESTS']!r}: expected full or default")
        return 1
    chosen, n_pages = site_pages(site, every)
    # Photographed: the index and the first chapter; by default the variant's page (the cheapest).
    photos = chosen[:2] if every else chosen[-1:]
    start = time.monotonic()
    try:
        problems, timing, colours, pages = check_site(site, shots, full, chosen, photos)
    except (EOFError, TimeoutError, RuntimeError, OSError) as e:
        print(f"FAIL: Chromium: {e}")
        return 1
    for what, secs in timing.items():
        print(f"     {what}: {secs:.2f} s")
    for name, n in colours.items():
        verdict = "ok  " if n > MIN_COLOURS else "FAIL"
        print(f"{verdict} screenshot of {name}: {n} distinct colours")
        if n <= MIN_COLOURS:
            problems.append(f"{name}: the screenshot is blank ({n} colours)")
    wide = [p for p in problems if "scrolls sideways" in p]
    print(f"{'FAIL' if wide else 'ok  '} each of the {len(pages)} pages fits a {WIDTH}-px window "
          "(no sideways scrolling)")
    for p in problems:
        print(f"FAIL {p}")
    if not every:
        print(f"the default selection: {len(pages)} of the {n_pages} pages ({', '.join(pages)}), "
              f"{', '.join(photos)} photographed; LITATTN_TESTS=full (meson test --setup full) loads them all "
              "and photographs the index and the first chapter")
    print(f"{len(pages)} pages in one Chromium in {time.monotonic() - start:.1f} s, {len(problems)} problems; "
          f"screenshots in {shots}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
