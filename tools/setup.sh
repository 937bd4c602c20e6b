#!/bin/sh
# The README's first command: install everything litattn and its default test
# run need on Debian 12, configure and build it, run every chapter once, and
# make the book view. After it, `meson test -C build` reports no SKIP. (The
# fixtures exported again from PyTorch are made by `meson test -C build
# --setup full`, which compares them: tests/meson.build.)
#
#   tools/setup.sh [BUILD_DIR]      (default: build)
#
# Installs, with apt-get (as root, or through sudo for another user), what is
# not installed yet:
#   gcc meson ninja-build pkg-config libhdf5-dev libssl-dev libminizip-dev libdeflate-dev hdf5-tools
#                         the C build: compiler, meson + ninja, HDF5, libcrypto,
#                         minizip (torch.save's zip archives), libdeflate (their CRC-32)
#   python3-torch python3-h5py
#                         PyTorch for Debian's /usr/bin/python3: the fixtures'
#                         export and the regen suite
#   python3-matplotlib python3-pygments python3-nbformat
#                         the book view (heatmaps, highlighting, the notebook)
#   python3-ipython       IPython's pretty printer: the regen test of what a
#                         notebook displays for a state_dict
#   chromium              the view suite's browser test (headless)
#   unicode-data          the Unicode tables' regen test (/usr/share/unicode)
#   nodejs npm            where `npm` is missing: node runs js-tiktoken, the
#                         reference tokenizer of the regen suite
# then `npm ci --prefix tools` (js-tiktoken at the version that
# tools/package-lock.json pins; skipped when that version is there).
# Running it again installs nothing new and rebuilds only what changed.
# Any step that fails stops it with exit 1 and one line on stderr saying which.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
fail() {
    echo "tools/setup.sh: $*" >&2
    exit 1
}

packages="gcc meson ninja-build pkg-config libhdf5-dev libssl-dev libminizip-dev libdeflate-dev hdf5-tools python3-torch python3-h5py"
packages="$packages python3-matplotlib python3-pygments python3-nbformat python3-ipython chromium unicode-data"
command -v npm >/dev/null 2>&1 || packages="$packages nodejs npm"
installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}
missing=
for p in $packages; do
    installed "$p" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        sudo=
    elif command -v sudo >/dev/null 2>&1; then
        sudo=sudo
    else
        fail "cannot install$missing: not root, and no sudo (run it as root, or install them first)"
    fi
    echo "=== apt-get install$missing"
    $sudo apt-get update -q || fail "apt-get update failed (needed to install$missing)"
    # shellcheck disable=SC2086
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing ||
        fail "apt-get install failed for$missing"
    for p in $missing; do
        installed "$p" || fail "apt-get install left $p not installed"
    done
fi

# js-tiktoken, the reference tokenizer (tools/package-lock.json). Before
# the build: the data-loading chapter's export takes its token ids from it.
want=$(sed -n 's/.*"js-tiktoken": "\([^"]*\)".*/\1/p' tools/package.json)
pkg=tools/node_modules/js-tiktoken/package.json
have=$(sed -n 's/^ *"version": "\([^"]*\)".*/\1/p' "$pkg" 2>/dev/null | head -n 1)
if [ "$have" != "$want" ]; then
    echo "=== npm ci --prefix tools (js-tiktoken $want)"
    npm ci --prefix tools --no-audit --no-fund || fail "npm ci --prefix tools failed (js-tiktoken $want)"
fi

if [ ! -f "$build/meson-private/coredata.dat" ]; then
    meson setup "$build" || fail "meson setup $build failed"
fi
meson compile -C "$build" || fail "meson compile -C $build failed"

# Every chapter of the chapter table, in the book's order, on its book variant.
for name in $(awk '!/^#/ && NF { print $1 }' chapters/chapters.txt); do
    echo "=== $name"
    "$build/chapters/$name" || fail "$build/chapters/$name failed (exit $?)"
done

# The book view beside the notebooks (build/book-view/index.html), which the
# view tests then find made.
meson compile -C "$build" book-view || fail "meson compile -C $build book-view failed"
