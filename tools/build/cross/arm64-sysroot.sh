#!/usr/bin/env bash
# arm64-sysroot.sh [DIR]: a sysroot for the arm64 cross build (default
# build-arm64-sysroot/ in the source tree) with Debian 12's arm64 HDF5, libaec,
# zlib and OpenSSL: headers, static archives and pkg-config files, unpacked with
# `dpkg -x`. Nothing is installed: installing libhdf5-dev:arm64 with apt would
# remove the x86-64 libhdf5-dev the native build needs. apt reads the arm64
# package lists into DIR/.apt (its own lists and cache, the machine's sources),
# so the machine's dpkg architectures and apt lists stay as they were.
#
# Also writes, for tools/build/cross/aarch64-linux-gnu.ini:
#   DIR/aarch64-linux-gnu-pkg-config  pkg-config that reads the sysroot's .pc files
#   DIR/sysroot.ini                   meson's [constants] sysroot = 'DIR'
# Made again only when this script or the package set changes (DIR/.done).
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
dir=${1:-$src/build-arm64-sysroot}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# What the static link needs: HDF5's libhdf5.a and headers, the archives of
# its filters and zlib (libsz.a and libaec.a, libz.a), and libcrypto.a (the
# GPT-2-size tensors' SHA-256), libminizip.a and libdeflate.a (.pth files). The compiler's own arm64 libc is Debian's
# gcc-aarch64-linux-gnu's (/usr/aarch64-linux-gnu).
packages=(libhdf5-dev libaec-dev zlib1g-dev libssl-dev libminizip-dev libdeflate-dev)
stamp="$(sha256sum "$0" | cut -d' ' -f1) ${packages[*]}"
if [ -f "$dir/.done" ] && [ "$(cat "$dir/.done")" = "$stamp" ]; then
    echo "arm64 sysroot: $dir (up to date)"
    exit 0
fi

for tool in dpkg apt-get aarch64-linux-gnu-gcc pkg-config; do
    command -v "$tool" >/dev/null || { echo "arm64-sysroot.sh: expected $tool on PATH, found none (apt-get install gcc-aarch64-linux-gnu pkg-config)" >&2; exit 1; }
done

apt_dir=$dir/.apt
rm -rf "$dir/usr" "$apt_dir"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
apt_opts=(-q -o "APT::Architecture=arm64" -o "APT::Architectures=arm64"
          -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
          -o "Dir::State::status=$apt_dir/status" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
: > "$apt_dir/status"
apt-get "${apt_opts[@]}" update >/dev/null
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "${packages[@]/%/:arm64}" >/dev/null)
for deb in "$apt_dir"/debs/*.deb; do
    dpkg -x "$deb" "$dir"
done

lib=$dir/usr/lib/aarch64-linux-gnu
# hdf5.pc is an alternative that dpkg would point at the serial build: here a copy.
cp "$lib/pkgconfig/hdf5-serial.pc" "$lib/pkgconfig/hdf5.pc"
for f in "$lib/hdf5/serial/libhdf5.a" "$lib/libsz.a" "$lib/libaec.a" "$lib/libz.a" "$lib/libcrypto.a" "$lib/libminizip.a" "$lib/libdeflate.a" \
         "$dir/usr/include/hdf5/serial/hdf5.h"; do
    [ -f "$f" ] || { echo "arm64-sysroot.sh: expected $f in the unpacked packages, found none" >&2; exit 1; }
done

cat > "$dir/aarch64-linux-gnu-pkg-config" <<PC
#!/bin/sh
# pkg-config for the arm64 sysroot $dir (tools/build/cross/arm64-sysroot.sh).
PKG_CONFIG_LIBDIR='$lib/pkgconfig:$dir/usr/share/pkgconfig' PKG_CONFIG_SYSROOT_DIR='$dir' exec pkg-config "\$@"
PC
chmod +x "$dir/aarch64-linux-gnu-pkg-config"
printf "# Written by tools/build/cross/arm64-sysroot.sh\n[constants]\nsysroot = '%s'\n" "$dir" > "$dir/sysroot.ini"
ls "$apt_dir"/debs/*.deb | sed 's|.*/||' > "$dir/packages.txt"
echo "$stamp" > "$dir/.done"
echo "arm64 sysroot: $dir ($(wc -l < "$dir/packages.txt") packages: $(tr '\n' ' ' < "$dir/packages.txt"))"
