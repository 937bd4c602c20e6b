#!/usr/bin/env python3
"""alloc_check.py: a chapter that runs out of memory stops cleanly.

    alloc_check.py CHAPTER_EXE [ARG...]

The chapter runs with LITATTN_ALLOC_COUNT=1 and LITATTN_ALLOC_SITES=1
(lib/base/alloc.h), which give N, the allocations of a good run, and each
place in the code that allocates (a site) with its first and last
allocation, once onto a new --dump target and once onto one already there;
each must exit 0, and a run with LITATTN_FAIL_ALLOC=N+1 must exit 0 too,
silent (nothing allocates past the count). ARGs are the chapter's own (a
--weights FILE, a --fixture): give them as absolute paths.
Then, for each n chosen below, a run with LITATTN_FAIL_ALLOC=n (the n-th
allocation fails) must:
  - exit 3 (EXIT_NO_MEMORY), not by a signal;
  - print exactly one line on stderr,
    "<chapter>: out of memory: expected <...> for <what>, found none";
  - leave no partial --dump: each run dumps to a file in a new temporary
    directory; every other run finds no file there (it must stay absent),
    every other run finds one there already (its bytes must stay the same);
  - leave nothing else in that directory (the dump's temporary is removed).
Which n: by default, the first and the last allocation of every site, every
other site (in the order of their first allocation) in the run onto an
existing target, the others in the run onto a new one, and every site that
only the run onto an existing target has, in that run: each
allocation the run makes, of whatever size, from wherever, fails at least
once, in a few dozen runs. With LITATTN_TESTS=full (meson test --setup
full) also every n from 1 to N, every other one onto an existing target.

Under a sanitizer build the runs keep ASan's leak check: die() exits with
everything it allocated still reachable (the tensor pool, the fixture, the
dump) or freed, so a run that stops on out of memory reports no leak.
"""
import os
import re
import subprocess
import sys
import tempfile

EXIT_NO_MEMORY = 3
PREVIOUS = b"a file that was there before the run\n"


def run(cmd, cwd, env_extra):
    env = dict(os.environ)
    env.pop("LITATTN_FAIL_ALLOC", None)
    env.pop("LITATTN_ALLOC_COUNT", None)
    env.update(env_extra)
    return subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=120)


def sites_of(stderr, prog):
    """{offset: (first, last)} from LITATTN_ALLOC_SITES's line."""
    m = re.search(rb"^%s: allocation sites:(.*)$" % re.escape(prog.encode()), stderr, re.M)
    if not m:
        return None
    return {int(at): (int(first), int(last))
            for first, last, at in re.findall(rb" (\d+)-(\d+)@(-?\d+)", m.group(1))}


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    exe, args = os.path.abspath(args[0]), args[1:]
    prog = os.path.basename(exe)
    full = os.environ.get("LITATTN_TESTS") == "full"
    oom_line = re.compile(r"%s: out of memory: expected (\d+ bytes|more than \d+ bytes|memory) for [^\n]+, "
                          r"found none\n" % re.escape(prog))
    failures = 0

    def fail(n, why):
        nonlocal failures
        failures += 1
        print(f"FAIL n={n}: {why}")

    with tempfile.TemporaryDirectory(prefix="alloc_check.") as top:
        # Two good runs: onto a new --dump target and onto one already there
        # (resolving an existing file takes its own allocations).
        counts, sites = {}, {}
        for existed in (False, True):
            work = os.path.join(top, f"count-{int(existed)}")
            os.mkdir(work)
            target = os.path.join(work, "out.h5")
            for extra in ({"LITATTN_ALLOC_COUNT": "1", "LITATTN_ALLOC_SITES": "1"}, None):
                if existed:
                    with open(target, "wb") as f:
                        f.write(PREVIOUS)
                if extra:
                    good = run([exe, *args, "--dump", target], work, extra)
                    m = re.search(rb"^%s: (\d+) allocations\n" % re.escape(prog.encode()), good.stderr, re.M)
                    sites[existed] = sites_of(good.stderr, prog)
                    if good.returncode != 0 or not m or not sites[existed] or good.stderr.count(b"\n") != 2:
                        print(f"FAIL: the good run: exit {good.returncode}, stderr {good.stderr!r}")
                        return 1
                    counts[existed] = int(m.group(1))
                else:
                    n = counts[existed] + 1
                    past = run([exe, *args, "--dump", target], work, {"LITATTN_FAIL_ALLOC": str(n)})
                    if past.returncode != 0 or past.stderr:
                        fail(n, f"past the count: exit {past.returncode}, stderr {past.stderr!r}")
        count = max(counts.values())
        # (n, whether the --dump target is there before the run)
        # A site's n in the run it is taken from: the two runs' allocations
        # differ (resolving an existing target), so their n's do too.
        picked = set()
        for i, (at, ends) in enumerate(sites[False].items()):
            existed = i % 2 == 1 and at in sites[True]
            picked |= {(n, existed) for n in (sites[True][at] if existed else ends)}
        for at, ends in sites[True].items():
            if at not in sites[False]:
                picked |= {(n, True) for n in ends}
        if full:  # every n too, every other one onto an existing target
            picked |= {(n, n % 2 == 0 and n <= counts[True] or n > counts[False]) for n in range(1, count + 1)}
        chosen = sorted(picked)
        for n, existed in chosen:
            d = os.path.join(top, f"n{n}-{int(existed)}")
            os.mkdir(d)
            target = os.path.join(d, "out.h5")
            if existed:
                with open(target, "wb") as f:
                    f.write(PREVIOUS)
            r = run([exe, *args, "--dump", target], d, {"LITATTN_FAIL_ALLOC": str(n)})
            err = r.stderr.decode("utf-8", "replace")
            if r.returncode < 0:
                fail(n, f"killed by signal {-r.returncode}; stderr {err!r}")
            elif r.returncode != EXIT_NO_MEMORY:
                fail(n, f"expected exit {EXIT_NO_MEMORY}, found {r.returncode}; stderr {err!r}")
            elif not oom_line.fullmatch(err):
                fail(n, f"expected one out-of-memory line on stderr, found {err!r}")
            left = sorted(os.listdir(d))
            if existed:
                with open(target, "rb") as f:
                    if f.read() != PREVIOUS:
                        fail(n, "the --dump target that was there is changed")
                left.remove("out.h5")
            if left:
                fail(n, f"expected nothing left in the directory, found {left}")
    print(f"{prog}: {counts[False]} allocations at {len(sites[False])} sites (onto a new --dump), {counts[True]} "
          f"at {len(sites[True])} (onto one there); {len(chosen)} runs with one failing"
          f"{' (every n, and each site first and last)' if full else ' (each site first and last; --setup full: every n too)'}, "
          f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
