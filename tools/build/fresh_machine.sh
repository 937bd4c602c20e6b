#!/usr/bin/env bash
# The README's quick start, then its two commands, on a fresh Debian 12, as
# a reader who has just cloned the repository would run them.
#
#   tools/build/fresh_machine.sh [--keep] [--cache DIR] [--debs DIR] [--tmpfs SIZE] [--mirror URL] [--log DIR] [--dir DIR]
#
# Makes a Debian 12 root (`debootstrap --variant=minbase bookworm`, the
# apt sources bookworm, bookworm-updates and bookworm-security, and their
# package lists, as an installed Debian has them), clones the repository's
# committed HEAD into /root/litattn there (uncommitted changes are not
# tested), mounts /proc, /sys, /dev, /dev/pts and a /dev/shm for it, gives
# it the host's way to the network (/etc/resolv.conf, the CA certificates in
# /usr/local/share/ca-certificates, the proxy variables), and runs in a
# chroot, as root from /root, with no other environment, in one checkout:
#   1. the quick start: each command of the first ```sh block of README.md's
#      section whose heading starts with "## Quick start", a leading `sudo `
#      dropped (root runs it), as `cd litattn && COMMAND`; the last one runs
#      a chapter, and the ```text block after it must be the first lines of
#      what it prints. Before and after it, the root must hold no PyTorch,
#      node or Chromium: the quick start is the C alone.
#   2. `meson test -C build --setup c`, the tests the quick start's packages
#      can run (tests/meson.build), in the build the quick start made.
#   3. each command of README.md's "Two commands" block, `cd litattn &&
#      COMMAND`, in the same checkout: a reader of the quick start who wants
#      everything next.
# It prints each step's wall time and the tests' counts of steps 2 and 3
# (OK, FAIL, SKIP, from build/meson-logs/testlog-c.json and testlog.json),
# and exits 1 if a command fails, a check above fails or any test reports
# FAIL or SKIP, 2 on a usage error, 0 otherwise. Whatever happens (an
# error, INT, TERM or HUP, a kill between the mounts and the chroot) it
# stops what runs in the root, unmounts everything under it and removes it.
#
#   --keep        leave the root (and its mounts undone) for a look inside
#   --cache DIR   keep the downloaded .debs in DIR (DIR/debootstrap for
#                 debootstrap --cache-dir, DIR/archives bind-mounted on the
#                 root's /var/cache/apt/archives), reused by the next run;
#                 apt and debootstrap check each one against the signed index;
#                 one run at a time uses a DIR (a second one stops at once)
#   --debs DIR    offer the .debs in DIR (e.g. the host's /var/cache/apt/archives,
#                 after tools/setup.sh) to the root's apt: copied into its
#                 /var/cache/apt/archives before the first command; apt takes
#                 one only where the signed index names its exact version and
#                 checksum, and downloads the rest
#   --tmpfs SIZE  make the root on a tmpfs of at most SIZE (e.g. 12G): dpkg
#                 and the build write to memory, and the cleanup is an unmount
#   --mirror URL  the Debian mirror (default: $LITATTN_MIRROR, else the first
#                 bookworm source of /etc/apt/sources.list{,.d/*}, else
#                 http://deb.debian.org/debian); the security archive likewise
#                 from bookworm-security's source ($LITATTN_SECURITY_MIRROR)
#   --log DIR     each step's output into DIR/<step>.log (and the tests'
#                 testlog.json) instead of the terminal; the last lines of a
#                 failed step are printed
#   --dir DIR     make the root in a new directory under DIR (default:
#                 $TMPDIR, else /var/tmp); it needs about 5 GB
#
# Needs root, debootstrap, git and a network. Takes tens of minutes: the
# downloads and installs (PyTorch, Chromium, node), the build and the tests.
# The whole script is one { } block, read before any of it runs: an edit to
# this file while it runs does not change what runs.
{
set -uo pipefail
set -m  # each step in its own process group, stopped as one
me=tools/build/fresh_machine.sh
usage() {
    sed -n '5p' "$0" | sed 's/^#   //' >&2
    exit 2
}
say() { echo "fresh_machine: $*"; }
die() {
    echo "$me: $*" >&2
    exit 1
}

keep=0 cache='' debs='' tmpfs='' logdir='' mirror=${LITATTN_MIRROR:-} security=${LITATTN_SECURITY_MIRROR:-} parent=${TMPDIR:-/var/tmp}
while [ $# -gt 0 ]; do
    case $1 in
    --keep) keep=1 ;;
    --cache) [ $# -ge 2 ] || usage; cache=$2; shift ;;
    --mirror) [ $# -ge 2 ] || usage; mirror=$2; shift ;;
    --log) [ $# -ge 2 ] || usage; logdir=$2; shift ;;
    --debs) [ $# -ge 2 ] || usage; debs=$2; shift ;;
    --tmpfs) [ $# -ge 2 ] || usage; tmpfs=$2; shift ;;
    --dir) [ $# -ge 2 ] || usage; parent=$2; shift ;;
    -h | --help) sed -n '2,/^# The whole script/{/^# The whole/q;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "$me: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, mount, chroot)"
for tool in debootstrap git chroot mount umount flock; do
    command -v "$tool" >/dev/null 2>&1 || die "needs $tool on PATH (apt-get install debootstrap git)"
done
repo=$(git -C "$(dirname "$0")/../.." rev-parse --show-toplevel 2>/dev/null) || die "$(dirname "$0")/../.. is not a git checkout"
sha=$(git -C "$repo" rev-parse HEAD) || die "no commit in $repo"
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ] ||
    say "note: $repo has uncommitted changes; the committed HEAD ${sha:0:7} is tested"

# The README's "Two commands": its first ```sh block, comments dropped.
mapfile -t commands < <(awk '
    /^## / { in_section = ($0 == "## Two commands"); next }
    in_section && /^```/ { if (in_block) exit; in_block = 1; next }
    in_block { sub(/[ \t]+#.*$/, ""); sub(/^[ \t]+/, ""); if (length($0) && $0 !~ /^#/) print }
' "$repo/README.md")
[ ${#commands[@]} -eq 2 ] ||
    die "README.md: the \"Two commands\" section's first code block holds ${#commands[@]} commands, expected 2"
# The quick start: the first ```sh block of the section whose heading starts
# with "## Quick start", one command a line, comments and a leading `sudo `
# dropped; and the ```text block after it, what its chapter prints first.
quick_section='/^## / { if (in_section) exit; in_section = (index($0, "## Quick start") == 1); next }
    !in_section { next }'
mapfile -t quick < <(awk "$quick_section"'
    /^```/ { if (in_block) exit; if ($0 ~ /^```sh[ \t]*$/) in_block = 1; next }
    in_block { sub(/[ \t]+#.*$/, ""); sub(/^[ \t]+/, ""); sub(/^sudo[ \t]+/, ""); if (length($0) && $0 !~ /^#/) print }
' "$repo/README.md")
[ ${#quick[@]} -ge 1 ] || die "README.md: no section whose heading starts with \"## Quick start\" with a \`\`\`sh block"
case ${quick[${#quick[@]} - 1]} in
build/chapters/*) ;;
*) die "README.md: the quick start's last command is '${quick[${#quick[@]} - 1]}', expected a chapter, build/chapters/..." ;;
esac
quick_text=$(awk "$quick_section"'
    /^```/ { if (open) { if (kind == "text" && after_sh) exit; if (kind == "sh") after_sh = 1; open = 0; next }
             open = 1; kind = substr($0, 4); next }
    open && kind == "text" && after_sh { print }
' "$repo/README.md")
[ -n "$quick_text" ] || die "README.md: the quick start has no \`\`\`text block after its commands (the chapter's output)"

# The mirrors: the host's bookworm (and bookworm-security) sources, one-line
# (*.list) or deb822 (*.sources).
host_source() {  # SUITE: the first URI of a deb source for exactly SUITE
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        case $f in
        *.list)
            awk -v suite="$1" '$1 == "deb" {
                i = 2; if ($i ~ /^\[/) { while (i < NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) == suite) { print $i; exit } }' "$f" ;;
        *.sources)
            awk -v suite="$1" '
                function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uri != "") { print uri; found = 1 } types = suites = uri = "" }
                /^[ \t]*$/ { flush(); if (found) exit; next }
                /^Types:/ { types = substr($0, 7) }
                /^Suites:/ { suites = substr($0, 8); gsub(/^[ \t]+|[ \t]+$/, "", suites) }
                /^URIs:/ { uri = $2 }
                END { if (!found) flush() }' "$f" ;;
        esac | head -n 1 | grep . && return 0
    done
    return 1
}
[ -n "$mirror" ] || mirror=$(host_source bookworm) || mirror=http://deb.debian.org/debian
[ -n "$security" ] || security=$(host_source bookworm-security) || security=http://deb.debian.org/debian-security

if [ -n "$cache" ]; then
    mkdir -p "$cache/debootstrap" "$cache/archives/partial" || die "cannot make $cache"
    cache=$(readlink -f "$cache")
    # One run at a time per cache: two apt-gets cannot share an archive.
    exec 9>"$cache/lock" && flock -n 9 || die "$cache is in use by another run (its lock file: $cache/lock)"
fi
if [ -n "$logdir" ]; then
    mkdir -p "$logdir" || die "cannot make $logdir"
    logdir=$(readlink -f "$logdir")
fi

mkdir -p "$parent" || die "cannot make $parent"
root=$(mktemp -d "$(readlink -f "$parent")/litattn-fresh.XXXXXX") || die "cannot make a directory under $parent"
case $root in *[[:space:]]*) rmdir "$root"; die "$root: a path with spaces is not supported" ;; esac
chmod 755 "$root"

# --- cleanup: whatever runs in the root, then every mount under it, then it.
step_pid=
mounts_under_root() {  # deepest first
    awk -v r="$root/" 'index($2, r) == 1 { print length($2), $2 }' /proc/self/mounts | sort -rn | cut -d' ' -f2-
}
in_root_pids() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && echo "${p#/proc/}"
    done
}
cleanup() {
    local status=$? sig pids m left
    trap '' INT TERM HUP
    # The running step's process group (debootstrap, git, or the chroot),
    # then anything left whose root is the root.
    if [ -n "$step_pid" ] && kill -0 "$step_pid" 2>/dev/null; then
        kill -TERM -- "-$step_pid" 2>/dev/null
    fi
    for sig in TERM TERM KILL; do
        pids=$(in_root_pids)
        [ -z "$pids" ] && break
        # shellcheck disable=SC2086
        kill -"$sig" $pids 2>/dev/null
        sleep 1
    done
    [ -n "$step_pid" ] && kill -KILL -- "-$step_pid" 2>/dev/null
    for m in $(mounts_under_root); do
        umount "$m" 2>/dev/null || umount -l "$m" || echo "$me: cannot unmount $m" >&2
    done
    left=$(mounts_under_root)
    if [ -n "$left" ]; then
        echo "$me: still mounted, $root left in place: ${left//$'\n'/ }" >&2
        status=1
    elif [ "$keep" = 1 ]; then
        say "the root is kept: $root"
    else
        if awk -v r="$root" '$2 == r { found = 1 } END { exit !found }' /proc/self/mounts; then
            umount "$root" 2>/dev/null || umount -l "$root" || { echo "$me: cannot unmount $root" >&2; status=1; }
        fi
        rm -rf --one-file-system "$root" || { echo "$me: cannot remove $root" >&2; status=1; }
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Runs "$@" as one step in its own process group: waits for it (a signal
# interrupts the wait, and cleanup stops the group), its output to the
# terminal or to $logdir/NAME.log; sets step_secs and returns its status.
step() {
    local name=$1 start end status
    shift
    start=$(date +%s%N)
    if [ -n "$logdir" ]; then
        "$@" >"$logdir/$name.log" 2>&1 </dev/null &
    else
        "$@" </dev/null &
    fi
    step_pid=$!
    wait "$step_pid"
    status=$?
    step_pid=
    end=$(date +%s%N)
    step_secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    if [ "$status" != 0 ] && [ -n "$logdir" ]; then
        echo "--- the last lines of $logdir/$name.log:"
        tail -n 30 "$logdir/$name.log"
    fi
    return "$status"
}

if [ -n "$tmpfs" ]; then
    mount -t tmpfs -o "size=$tmpfs,mode=755" litattn-fresh "$root" || die "cannot mount a tmpfs of $tmpfs on $root"
fi
say "HEAD ${sha:0:7} of $repo; a Debian 12 root in $root, from $mirror"
args=(--variant=minbase)
[ -n "$cache" ] && args+=("--cache-dir=$cache/debootstrap")
step debootstrap debootstrap "${args[@]}" bookworm "$root" "$mirror" ||
    die "debootstrap --variant=minbase bookworm $root $mirror failed"
say "debootstrap --variant=minbase bookworm: $step_secs s"
debootstrap_secs=$step_secs

cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
# The host's way to the network: its resolver, and the CA certificates added
# locally (a network that inspects TLS; the root's ca-certificates package,
# once installed, trusts them too), and below its proxy variables.
rm -f "$root/etc/resolv.conf"
cp -L /etc/resolv.conf "$root/etc/resolv.conf" || die "cannot copy /etc/resolv.conf into the root"
if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$root/usr/local/share/ca-certificates" &&
        cp -RL /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/" ||
        die "cannot copy /usr/local/share/ca-certificates into the root"
fi
step clone git clone -q --no-checkout "$repo" "$root/root/litattn" || die "git clone $repo failed"
git -C "$root/root/litattn" checkout -q --detach "$sha" || die "git checkout $sha in the clone failed"

# The mounts, each bind made private so that nothing below it reaches the host.
bind() {
    mount --bind "$1" "$2" || die "cannot bind $1 on $2"
    mount --make-private "$2" || die "cannot make $2 private"
}
mount -t proc proc "$root/proc" || die "cannot mount proc on $root/proc"
mount -t sysfs sysfs "$root/sys" || die "cannot mount sysfs on $root/sys"
bind /dev "$root/dev"
bind /dev/pts "$root/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm" || die "cannot mount a tmpfs on $root/dev/shm"
[ -n "$cache" ] && bind "$cache/archives" "$root/var/cache/apt/archives"
if [ -n "$debs" ]; then
    n=$(find "$debs" -maxdepth 1 -name '*.deb' | wc -l)
    find "$debs" -maxdepth 1 -name '*.deb' -exec cp -t "$root/var/cache/apt/archives/" {} + ||
        die "cannot copy the .debs of $debs into the root"
    say "$n .debs of $debs offered to the root's apt (each checked against the signed index)"
fi

proxies=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
    [ -n "${!v:-}" ] && proxies+=("$v=${!v}")
done
in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${proxies[@]}" \
        /bin/sh -c "cd && $1"
}
times="debootstrap $debootstrap_secs s"
# Runs `cd litattn && COMMAND` (its stdout to FILE if given) in the root as
# step NAME, and adds its time.
run_in_root() {  # NAME COMMAND [FILE]
    local rc
    say "running in the root: cd litattn && $2${3:+ > $3}"
    step "$1" in_root "cd litattn && $2${3:+ > $3}"
    rc=$?
    say "\`$2\`: $step_secs s (exit $rc)"
    times+="; $2 $step_secs s"
    return "$rc"
}
# The tests' counts of one `meson test` run (its JSON log, kept in $logdir
# as NAME), every test not OK by name; 1 on any FAIL or SKIP, or no test.
count_tests() {  # LOG NAME
    local log=$1 ok skip fail
    if [ ! -f "$log" ]; then
        say "no test log: $log"
        return 1
    fi
    [ -n "$logdir" ] && cp "$log" "$logdir/$2"
    ok=$(grep -c '"result": "OK"' "$log")
    skip=$(grep -c '"result": "SKIP"' "$log")
    fail=$(($(wc -l <"$log") - ok - skip))
    grep -v '"result": "OK"' "$log" | sed -n 's/.*"name": "\([^"]*\)".*"result": "\([A-Z]*\)".*/  \2 \1/p'
    say "tests: $ok OK, $fail FAIL, $skip SKIP"
    [ "$ok" -gt 0 ] && [ "$fail" = 0 ] && [ "$skip" = 0 ]
}
# What the C alone must not bring: PyTorch, node, Chromium (their Debian
# packages, their programs, torch for any python3). Prints those found.
beyond_c() {
    local p
    for p in python3-torch nodejs npm chromium; do
        chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && echo "$p"
    done
    for p in usr/bin/node usr/bin/nodejs usr/bin/chromium; do
        [ -e "$root/$p" ] && echo "/$p"
    done
    [ -x "$root/usr/bin/python3" ] && in_root '/usr/bin/python3 -c "import torch"' >/dev/null 2>&1 && echo "torch for /usr/bin/python3"
}

status=0
# 1. The quick start on the bare root: its package lists first, as a Debian
# installed by its installer has them (debootstrap leaves none).
step apt-update in_root 'apt-get update -q' || die "apt-get update in the root failed"
say "apt-get update: $step_secs s"
times+="; apt-get update $step_secs s"
found=$(beyond_c)
[ -z "$found" ] || die "the fresh root already holds ${found//$'\n'/, }"
for i in "${!quick[@]}"; do
    # (the chapter's stdout kept, to compare with the README's text block)
    out=
    [ "$i" = $((${#quick[@]} - 1)) ] && out=/root/quick-start.out
    if ! run_in_root "quick-start$((i + 1))" "${quick[$i]}" $out; then
        status=1
        break
    fi
done
if [ "$status" = 0 ]; then
    out=$root/root/quick-start.out
    n=$(printf '%s\n' "$quick_text" | wc -l)
    if [ "$(head -n "$n" "$out")" = "$quick_text" ]; then
        say "the quick start's chapter printed the README's $n lines first ($(wc -l <"$out") in all)"
    else
        say "the quick start's chapter printed otherwise than the README's text block; the first differences:"
        diff <(printf '%s\n' "$quick_text") <(head -n "$n" "$out") | head -n 20
        status=1
    fi
    found=$(beyond_c)
    if [ -n "$found" ]; then
        say "the quick start installed more than the C: ${found//$'\n'/, }"
        status=1
    fi
fi
# 2. The tests the quick start's packages can run, with no SKIP.
if [ "$status" = 0 ]; then
    run_in_root tests-c 'meson test -C build --setup c' || status=1
    count_tests "$root/root/litattn/build/meson-logs/testlog-c.json" testlog-c.json || status=1
fi
# 3. The two commands, in the same checkout.
if [ "$status" = 0 ]; then
    for i in 0 1; do
        if ! run_in_root "command$((i + 1))" "${commands[$i]}"; then
            status=1
            break
        fi
    done
    count_tests "$root/root/litattn/build/meson-logs/testlog.json" testlog.json || status=1
fi
say "times: $times"
exit "$status"
}
