"""The book view's site for its tests: built once, when stale.

Both `view` tests (tools/view/view_check.py, tools/view/view_browser.py) call
ensure_site() first."""
import fcntl
import os
import subprocess
import sys


def ensure_site(build, site):
    """Builds the site unless it was made from the same inputs
    (book_view.py --if-stale), one test at a time (a lock beside it): the
    `view` tests build the site themselves, so that neither the default
    build nor `meson test`'s prerequisites run the chapters for it."""
    os.makedirs(os.path.dirname(os.path.abspath(site)), exist_ok=True)
    with open(os.path.abspath(site) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "book_view.py")
        p = subprocess.run([sys.executable, tool, "--build", build, "--out", site, "--if-stale", "--no-fail"],
                           capture_output=True, text=True)
        print(p.stdout.strip() or "book_view: (no output)")
        if p.stderr.strip():
            print(p.stderr.strip())
