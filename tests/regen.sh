#!/bin/sh
# regen: the fixtures are what PyTorch makes when run again, in two steps.
#
#   regen.sh export SOURCE_ROOT OUT_DIR DEPFILE
#       The build (tests/meson.build's `regenerated`): every fixture made again
#       from PyTorch into OUT_DIR (tools/export/export_fixtures.py --regenerate), and
#       DEPFILE, naming every file the export read, so that ninja redoes it only
#       when one of them changes. It never fails the build: where Debian's
#       Python cannot import torch and h5py, OUT_DIR holds SKIP, saying why;
#       where the export fails, FAILED, with what it printed.
#   regen.sh compare SOURCE_ROOT OUT_DIR
#       The test: OUT_DIR against the committed fixtures/ (tools/export/fixture_diff.py),
#       or the SKIP (exit 77) or FAIL that the export left there.
#   regen.sh one SOURCE_ROOT NAME
#       The default test run's case of the same check, with no export made by
#       the build: the fixture NAME made again from PyTorch as the test runs
#       (tools/export/export_fixtures.py --check --only NAME, one process) and
#       compared with fixtures/ in the same way. SKIP (exit 77), saying why,
#       where Debian's Python has no torch or h5py, or, for the data-loading
#       chapter's files, no node or js-tiktoken.
mode=${1:-}
root=${2:-}
out=${3:-}
py=/usr/bin/python3
if [ -z "$root" ] || [ -z "$out" ] || { [ "$mode" != export ] && [ "$mode" != compare ] && [ "$mode" != one ]; }; then
    echo "usage: regen.sh export SOURCE_ROOT OUT_DIR DEPFILE | regen.sh compare SOURCE_ROOT OUT_DIR" \
        "| regen.sh one SOURCE_ROOT NAME" >&2
    exit 2
fi

if [ "$mode" = one ]; then
    name=$out
    # Found, not imported: importing torch to see whether it is there would
    # cost as much as the export of a small fixture.
    if ! "$py" -c 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ("torch", "h5py")))' \
        2>/dev/null; then
        echo "SKIP: $py cannot import torch and h5py (apt-get install python3-torch python3-h5py)"
        exit 77
    fi
    case $name in
    ch03_mha_data_loading.* | sweep_data_loading*)
        # Its token ids come from js-tiktoken under node (tools/export/ch03_mha.py).
        if ! command -v node >/dev/null 2>&1 && ! command -v nodejs >/dev/null 2>&1; then
            echo "SKIP: $name needs node to run the reference tokenizer (apt-get install nodejs npm; npm ci --prefix tools)"
            exit 77
        fi
        if [ ! -f "$root/tools/node_modules/js-tiktoken/package.json" ]; then
            echo "SKIP: $name needs js-tiktoken, which is not installed (npm ci --prefix $root/tools)"
            exit 77
        fi
        ;;
    esac
    echo "$name made again from PyTorch and compared with fixtures/ (--setup full: every fixture, made by the build)"
    exec "$py" "$root/tools/export/export_fixtures.py" --check --only "$name" --jobs 1
fi

if [ "$mode" = compare ]; then
    if [ -f "$out/SKIP" ]; then
        cat "$out/SKIP"
        exit 77
    fi
    if [ -f "$out/FAILED" ]; then
        echo "FAIL: the build's export of the fixtures failed (remove $out to export again); it printed:"
        cat "$out/FAILED"
        exit 1
    fi
    # The data-loading chapter's files need node and js-tiktoken (their
    # token ids): where the export could not make them, SKIPPED_NODE says
    # why, they are left out here and `compare ... node` reports the SKIP.
    node_files=ch03_mha_data_loading.book.h5,sweep_data_loading.h5
    if [ "${4:-}" = node ]; then
        if [ -f "$out/SKIPPED_NODE" ]; then
            cat "$out/SKIPPED_NODE"
            exit 77
        fi
        exec "$py" "$root/tools/export/fixture_diff.py" --only "$node_files" "$root/fixtures" "$out"
    fi
    # The bonus notebook at its own size is exported once and committed, not
    # by the build (minutes with the reference BLAS: tools/export/files.py
    # EXPORTED_ONCE); its small variant is exported here like the others.
    exec "$py" "$root/tools/export/fixture_diff.py" --except "$node_files,ch03_bonus_mha_implementations.book.h5" \
        "$root/fixtures" "$out"
fi

depfile=${4:?usage: regen.sh export SOURCE_ROOT OUT_DIR DEPFILE}
# Until the export names what it read: the tools, the chapter table, and the
# directory where Debian installs Python packages (torch arriving changes it).
{
    printf '%s:' "$out"
    for f in "$root"/tools/export/*.py "$root/chapters/chapters.txt" "$py" /usr/lib/python3/dist-packages; do
        [ -e "$f" ] && printf ' \\\n  %s' "$(printf '%s' "$f" | sed 's/[ #]/\\&/g')"
    done
    printf '\n'
} > "$depfile"
note() {
    rm -rf "$out" && mkdir -p "$out" && cat > "$out/$1"
}
if ! "$py" -c 'import torch, h5py' 2>/dev/null; then
    echo "SKIP: $py cannot import torch and h5py (apt-get install python3-torch python3-h5py)" | note SKIP
    exit 0
fi
log=$out.log
if ! "$py" "$root/tools/export/export_fixtures.py" --regenerate "$out" --depfile "$depfile" > "$log" 2>&1; then
    tail -n 40 "$log" | note FAILED
fi
rm -f "$log"
exit 0
