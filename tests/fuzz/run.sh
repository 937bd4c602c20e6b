#!/usr/bin/env bash
# Runs the libFuzzer harnesses for SECONDS each, one after the other.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]    (default: fuzz_fixture fuzz_cli fuzz_dump fuzz_tokenizer fuzz_pth)
#
# BUILD_DIR is configured as tests/fuzz/meson.build says (clang,
# -Dfuzzing=true, ASan + UBSan). The committed seeds (tests/fuzz/corpus/*,
# and the chapter fixtures in fixtures/ for the fixture harness) are copied
# into a scratch directory, so the repository is never written. Prints, per
# harness, the executions, coverage (cov: edges, ft: features) and the size
# of the corpus at the end. Exits non-zero if any harness crashed, leaked,
# timed out, ran out of memory, or let HDF5 print its error stack; the
# scratch directory, with libFuzzer's crash-*/leak-*/timeout-*/oom-* inputs,
# is then kept and its paths printed. Ends within SECONDS * 2 + 30 seconds
# for two harnesses (SECONDS + 12 each at most).
set -uo pipefail

if [ $# -lt 2 ] || ! [ "$2" -gt 0 ] 2>/dev/null; then
    echo "usage: $0 BUILD_DIR SECONDS [HARNESS...]" >&2
    exit 2
fi
build=$(cd "$1" && pwd) || exit 2
seconds=$2
shift 2
harnesses=${*:-fuzz_fixture fuzz_cli fuzz_dump fuzz_tokenizer fuzz_pth}
src=$(cd "$(dirname "$0")/../.." && pwd)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/litattn-fuzz.XXXXXX") || exit 2
# The fixture harness's scratch file goes here too (it honours TMPDIR).
export TMPDIR=$scratch
# Any sanitizer report stops the run (UBSan would otherwise print and go on).
asan=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

status=0

# run NAME MAX_LEN MALLOC_LIMIT_MB SEED_FILE...
run() {
    local name=$1 max_len=$2 malloc_limit=$3
    shift 3
    local exe=$build/tests/fuzz/$name dir=$scratch/$name
    mkdir -p "$dir/corpus"
    if [ ! -x "$exe" ]; then
        echo "$name: $exe not built (configure with -Dfuzzing=true and CC=clang)"
        status=1
        return
    fi
    local seed
    for seed in "$@"; do
        # (the .pth cases' deflated bombs: 8 MiB pickles, seconds each under the sanitizers; unit / pth reads them)
        case $seed in *_bomb.pth) continue ;; esac
        [ -f "$seed" ] && [ "$(stat -c %s "$seed")" -le "$max_len" ] && cp "$seed" "$dir/corpus/"
    done
    # libFuzzer stops itself after SECONDS; a single input gets 5 s before
    # it counts as a timeout. The outer `timeout` is only a backstop, with
    # room for loading the corpus and writing a report.
    local rc=0
    # The fixture reader runs HDF5 in a child process (lib/io/hdf5_snapshot.h),
    # which inherits libFuzzer's malloc hook: a huge allocation HDF5 makes
    # there would be reported as this process's out-of-memory. So its
    # per-allocation limit is lifted; the child is bounded by its own 2 s
    # deadline, and this process by -rss_limit_mb. The .pth reader's are
    # bounded by what a file holds (lib/io/README.md): one allocation of
    # 512 MiB (a tensor is at most 256 MiB) and 2 GiB in all is a bug.
    ( cd "$dir" && ASAN_OPTIONS=$asan \
        timeout -k 2 $((seconds + 10)) "$exe" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=5 -rss_limit_mb=2048 -malloc_limit_mb="$malloc_limit" \
        -dict="$src/tests/fuzz/$name.dict" -print_final_stats=1 -artifact_prefix="$dir/" \
        "$dir/corpus" ) > "$dir/log" 2>&1 || rc=$?

    local last execs
    last=$(grep -E '^#[0-9]+' "$dir/log" | tail -n 1)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
    printf '%-13s execs %s  cov %s  ft %s  corpus %s files (%s)  exit %d\n' "$name" "${execs:-?}" \
        "$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")" \
        "$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")" \
        "$(find "$dir/corpus" -type f | wc -l)" "$(du -sb "$dir/corpus" | cut -f1) bytes" "$rc"

    local bad=0 f
    [ "$rc" -eq 0 ] || bad=1
    if grep -q 'HDF5-DIAG' "$dir/log"; then
        echo "$name: HDF5 printed its error stack (see $dir/log)"
        bad=1
    fi
    for f in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* "$dir"/slow-unit-*; do
        [ -e "$f" ] || continue
        echo "$name: found $f"
        bad=1
    done
    if [ "$bad" -ne 0 ]; then
        echo "$name: FAILED; the report (last lines of $dir/log):"
        grep -aE 'ERROR|SUMMARY|invariant broken|^ *#[0-9]+ 0x|Test unit written' "$dir/log" |
            grep -avE 'in (__interceptor_|__sanitizer|__asan|fuzzer::|__libc_start|_start )' | head -n 16 |
            sed 's/ (BuildId: [0-9a-f]*)//' | cut -c1-200 | sed 's/^/    /'
        echo "    reproduce: $exe <one of the files above>"
        status=1
    fi
}

for h in $harnesses; do
    case $h in
    fuzz_fixture) run fuzz_fixture 32768 1000000 "$src"/tests/fuzz/corpus/fixture/* "$src"/fixtures/ch03_*.h5 ;;
    fuzz_cli) run fuzz_cli 4096 1000000 "$src"/tests/fuzz/corpus/cli/* ;;
    fuzz_dump) run fuzz_dump 4096 1000000 "$src"/tests/fuzz/corpus/dump/* ;;
    fuzz_tokenizer) run fuzz_tokenizer 8192 1000000 "$src"/tests/fuzz/corpus/tokenizer/* ;;
    fuzz_pth) run fuzz_pth 16384 512 "$src"/tests/fuzz/corpus/pth/* "$src"/fixtures/pth/*.pth ;;
    *) echo "$0: no harness '$h' (fuzz_fixture, fuzz_cli, fuzz_dump, fuzz_tokenizer, fuzz_pth)" >&2; status=2 ;;
    esac
done

if [ "$status" -eq 0 ]; then
    rm -rf "$scratch"
    echo "fuzzing: no crash, leak or timeout in ${seconds} s per harness"
else
    echo "fuzzing: FAILED; scratch directory kept: $scratch"
fi
exit "$status"
