#!/bin/sh
# The README's first command: install what litattn needs on Debian 12,
# configure and build it (the fixtures exported again from PyTorch, for the
# regen test, among it), run every chapter once, and make the book view.
#
#   tools/setup.sh [BUILD_DIR]      (default: build)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}

# C: compiler, meson + ninja, HDF5, minizip (torch.save's zip archives). PyTorch side: torch and h5py for
# Debian's /usr/bin/python3 (tools/export_fixtures.py and the regen test).
packages="gcc meson ninja-build pkg-config libhdf5-dev libssl-dev libminizip-dev hdf5-tools python3-torch python3-h5py"
# The book view (ninja -C build book-view, tools/book_view.py): heatmaps,
# highlighting, the companion notebook. Its browser test wants chromium too,
# which CI installs (.ci/run); without it that test reports SKIP.
packages="$packages python3-matplotlib python3-pygments python3-nbformat"
# IPython's pretty printer, for the regen test of fixtures/pretty_cases.txt
# (what a notebook displays for a state_dict).
packages="$packages python3-ipython"
missing=
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
fi

[ -d "$build" ] || meson setup "$build"
meson compile -C "$build"

# Every chapter of the chapter table, in the book's order, on its book variant.
for name in $(awk '!/^#/ && NF { print $1 }' chapters/chapters.txt); do
    echo "=== $name"
    "$build/chapters/$name"
done

# The book view beside the notebooks (build/book-view/index.html), which the
# view tests then find made.
meson compile -C "$build" book-view
