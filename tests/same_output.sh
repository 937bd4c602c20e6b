#!/bin/sh
# same_output.sh CHAPTER ARGS_A... -- ARGS_B...: runs the chapter twice and
# passes if both runs exit 0 and print the same stdout, byte for byte. On a
# difference, prints both command lines and the first lines of the diff.
# The chapter starts through $LITATTN_EXE_WRAPPER (empty but in a cross
# build, where it is qemu).
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 CHAPTER ARGS_A... -- ARGS_B..." >&2
    exit 2
fi
chapter=$1
shift
a_args=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    a_args="$a_args $1"
    shift
done
if [ $# -eq 0 ]; then
    echo "$0: expected -- between the two runs' arguments, found none" >&2
    exit 2
fi
shift
scratch=$(mktemp -d "${TMPDIR:-/tmp}/litattn-same-output.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
# (the arguments are words without spaces: variant names, seeds, sizes)
# shellcheck disable=SC2086
${LITATTN_EXE_WRAPPER:-} "$chapter" $a_args > "$scratch/a" || { echo "FAIL: $chapter$a_args exited $?"; exit 1; }
${LITATTN_EXE_WRAPPER:-} "$chapter" "$@" > "$scratch/b" || { echo "FAIL: $chapter $* exited $?"; exit 1; }
if ! cmp -s "$scratch/a" "$scratch/b"; then
    echo "FAIL: $chapter$a_args"
    echo "      prints other lines than $chapter $*:"
    diff "$scratch/a" "$scratch/b" | head -20
    exit 1
fi
echo "ok   $chapter$a_args prints what $chapter $* prints ($(wc -l < "$scratch/a") lines)"
