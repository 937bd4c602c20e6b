#!/usr/bin/env bash
# count.sh [BUILD]: arm64's speed by proxy, in one command: the guest
# instructions each of bench_kernels' products at Exercise 3.3's size (and
# its softmax, exp, row sum, softmax backward and dropout rows) runs under
# qemu-user, on the NEON path and on the scalar path, and their ratio. BUILD
# (default build-arm64/) is an arm64 cross build (tools/build/cross/arm64.sh
# makes one). Prints a table, each NEON kernel's functions with the most
# instructions, and the NEON register tile's inner loop as objdump shows it;
# the raw logs stay in BUILD/insns/.
#
# How: tests/bench_insns.c calls each kernel once between two calls of a
# marker function; the TCG plugin tools/build/cross/insn_count.c (built here
# for the build machine with cc) counts the instructions of every translated
# block that runs, in all and by the function it starts in, and writes the
# counts of each window between two markers. qemu runs one guest thread
# (bench_insns runs 1 thread). tools/build/cross/README.md says what the
# proxy shows and what it cannot.
# Needs: qemu-user (7.2: plugin API version 1), a C compiler for the build
# machine, binutils-aarch64-linux-gnu (objdump; gcc-aarch64-linux-gnu
# brings it), python3.
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$src"
build=${1:-build-arm64}
[ -f "$build/build.ninja" ] || { echo "count.sh: expected an arm64 build in $build (tools/build/cross/arm64.sh makes one), found none" >&2; exit 2; }
out=$build/insns
mkdir -p "$out"

cc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$out/insn_count.so" tools/build/cross/insn_count.c
ninja -C "$build" tests/bench_insns >/dev/null

for path in neon scalar; do
    start=$SECONDS
    LITATTN_KERNELS=$path qemu-aarch64 -L /usr/aarch64-linux-gnu -d plugin -D "$out/plugin-$path.log" \
        -plugin "$out/insn_count.so,mark=bench_insns_mark" "$build/tests/bench_insns" > "$out/windows-$path.txt"
    echo "=== $path: $((SECONDS - start)) s under qemu-user with the plugin"
done

python3 - "$out" <<'PY'
import sys
out = sys.argv[1]

def read(path):
    labels, totals, symbols = {}, {}, {}
    for line in open(f'{out}/windows-{path}.txt'):
        f = line.split(' ', 3)  # window W PATH LABEL
        labels[int(f[1])] = f[3].strip()
    for line in open(f'{out}/plugin-{path}.log'):
        f = line.split()
        if len(f) == 4 and f[0] == 'window' and f[2] == 'total':
            totals[int(f[1])] = int(f[3])
        elif len(f) == 5 and f[0] == 'window' and f[2] == 'symbol':
            symbols.setdefault(int(f[1]), []).append((f[3], int(f[4])))
    if not labels or any(w not in totals for w in labels):
        sys.exit(f'count.sh: expected a total for every window of {path} in {out}/plugin-{path}.log, found '
                 f'{len(totals)} of {len(labels)}')
    return labels, totals, symbols

neon, scalar = read('neon'), read('scalar')
print(f"\n{'kernel':<44} {'scalar':>15} {'neon':>15} {'scalar / neon':>13}")
for w in sorted(neon[0]):
    n, s = neon[1][w], scalar[1][w]
    print(f'{neon[0][w]:<44} {s:>15,} {n:>15,} {s / n:>13.2f}')
print('\nneon: the functions with the most of each kernel\'s instructions')
for w in sorted(neon[0]):
    top = ', '.join(f'{name} {100 * c / neon[1][w]:.1f} %' for name, c in neon[2].get(w, [])[:3])
    print(f'  {neon[0][w]:<44} {top}')
PY

echo
echo "gemm_simd_tile_neon's loop over k (from the block's first load to its branch back):"
aarch64-linux-gnu-objdump -d --no-show-raw-insn "$build/tests/bench_insns" |
    awk '/<gemm_simd_tile_neon>:/ { f = 1 } f && /ld1r/ { loop = 1 } loop { print } loop && /b\.(ne|any|gt|lt)/ { exit }'
