#!/bin/sh
# regen for fixtures/pretty_cases.txt: what IPython displays for a
# state_dict, made again by tools/cases/pretty_cases.py (Debian's python3-ipython
# and python3-torch) into OUT_DIR and compared byte for byte.
#
#   regen_pretty.sh SOURCE_ROOT OUT_DIR
#
# SKIP (exit 77), saying why, when IPython or torch is missing.
root=${1:-}
out=${2:-}
if [ -z "$root" ] || [ -z "$out" ]; then
    echo "usage: regen_pretty.sh SOURCE_ROOT OUT_DIR" >&2
    exit 2
fi
py=/usr/bin/python3
# Found, not imported (importing them is most of the script's own time).
for module in IPython torch; do
    if ! "$py" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$module') is None)" 2>/dev/null; then
        echo "SKIP: $py cannot import $module (apt-get install python3-ipython python3-torch)"
        exit 77
    fi
done
mkdir -p "$out" || exit 1
"$py" "$root/tools/cases/pretty_cases.py" "$out/pretty_cases.txt" || { echo "FAIL: tools/cases/pretty_cases.py failed"; exit 1; }
if cmp -s "$out/pretty_cases.txt" "$root/fixtures/pretty_cases.txt"; then
    echo "ok   fixtures/pretty_cases.txt is what IPython displays"
    exit 0
fi
echo "FAIL: fixtures/pretty_cases.txt differs from what tools/cases/pretty_cases.py makes now:"
diff "$root/fixtures/pretty_cases.txt" "$out/pretty_cases.txt" | head -20
exit 1
