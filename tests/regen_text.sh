#!/bin/sh
# regen for lib/text/: the committed tokenizer files are what their
# generators make when run again.
#
#   regen_text.sh cases SOURCE_ROOT OUT_DIR
#       node runs tools/cases/tokenizer_cases.mjs (npm's js-tiktoken, the
#       reference tokenizer) into OUT_DIR/tokenizer_cases.txt, compared byte
#       for byte with fixtures/tokenizer_cases.txt.
#   regen_text.sh unicode SOURCE_ROOT OUT_DIR
#       tools/cases/gen_unicode_tables.py on Debian's UCD (/usr/share/unicode)
#       into OUT_DIR/unicode_tables.c, compared with lib/text/unicode_tables.c.
#
# SKIP (exit 77), saying why, when node, js-tiktoken (npm ci --prefix
# tools) or the UCD (apt-get install unicode-data) is missing.
mode=${1:-}
root=${2:-}
out=${3:-}
if [ -z "$root" ] || [ -z "$out" ] || { [ "$mode" != cases ] && [ "$mode" != unicode ]; }; then
    echo "usage: regen_text.sh cases|unicode SOURCE_ROOT OUT_DIR" >&2
    exit 2
fi
ucd=/usr/share/unicode
if [ ! -f "$ucd/UnicodeData.txt" ] || [ ! -f "$ucd/PropList.txt" ]; then
    echo "SKIP: no Unicode Character Database in $ucd (apt-get install unicode-data)"
    exit 77
fi
mkdir -p "$out" || exit 1

if [ "$mode" = unicode ]; then
    py=/usr/bin/python3
    "$py" "$root/tools/cases/gen_unicode_tables.py" "$ucd" "$out/unicode_tables.c" || exit 1
    if ! cmp -s "$root/lib/text/unicode_tables.c" "$out/unicode_tables.c"; then
        echo "FAIL: lib/text/unicode_tables.c is not what tools/cases/gen_unicode_tables.py makes from $ucd:"
        diff "$root/lib/text/unicode_tables.c" "$out/unicode_tables.c" | head -n 20
        exit 1
    fi
    echo "OK: lib/text/unicode_tables.c is what the generator makes from $ucd"
    exit 0
fi

node=$(command -v node || command -v nodejs)
if [ -z "$node" ]; then
    echo "SKIP: no node to run the reference tokenizer (apt-get install nodejs npm; npm ci --prefix tools)"
    exit 77
fi
pkg=$root/tools/node_modules/js-tiktoken/package.json
if [ ! -f "$pkg" ]; then
    echo "SKIP: js-tiktoken is not installed (npm ci --prefix $root/tools)"
    exit 77
fi
want=$(sed -n 's/.*"js-tiktoken": "\([^"]*\)".*/\1/p' "$root/tools/package.json")
have=$(sed -n 's/^ *"version": "\([^"]*\)".*/\1/p' "$pkg" | head -n 1)
if [ "$want" != "$have" ]; then
    echo "FAIL: tools/node_modules has js-tiktoken $have, package.json pins $want (npm ci --prefix $root/tools)"
    exit 1
fi
# node runs again only when something it reads changed (the script, the
# pinned packages, js-tiktoken itself, the book's sample, the UCD, node):
# their digests are kept beside its output, as the fixtures' export keeps a
# depfile. Otherwise the comparison alone runs (node takes seconds).
inputs="$root/tools/cases/tokenizer_cases.mjs $root/tools/package.json $root/tools/package-lock.json
$pkg $root/fixtures/gpt2/small-text-sample.txt $ucd/UnicodeData.txt $ucd/PropList.txt"
stamp=$( { "$node" --version; sha256sum $inputs; } | sha256sum | cut -d' ' -f1)
if [ ! -f "$out/tokenizer_cases.txt" ] || [ "$(cat "$out/tokenizer_cases.stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -f "$out/tokenizer_cases.stamp"
    "$node" "$root/tools/cases/tokenizer_cases.mjs" "$out/tokenizer_cases.txt" || exit 1
    echo "$stamp" > "$out/tokenizer_cases.stamp"
else
    echo "(js-tiktoken's output of an earlier run: nothing it reads has changed)"
fi
if ! cmp -s "$root/fixtures/tokenizer_cases.txt" "$out/tokenizer_cases.txt"; then
    echo "FAIL: fixtures/tokenizer_cases.txt is not what js-tiktoken $have writes ($out/tokenizer_cases.txt); first differences:"
    diff "$root/fixtures/tokenizer_cases.txt" "$out/tokenizer_cases.txt" | head -n 20 | cut -c1-200
    exit 1
fi
echo "OK: fixtures/tokenizer_cases.txt is what js-tiktoken $have writes"
