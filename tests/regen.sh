#!/bin/sh
# regen: regenerate every fixture from PyTorch and compare with the committed
# ones. PyTorch lives in Debian's Python (python3-torch, python3-h5py); where
# that Python cannot import them the test is skipped, saying why (exit 77).
root=${1:?usage: regen.sh SOURCE_ROOT}
py=/usr/bin/python3
if ! "$py" -c 'import torch, h5py' 2>/dev/null; then
    echo "SKIP: $py cannot import torch and h5py (apt-get install python3-torch python3-h5py)"
    exit 77
fi
exec "$py" "$root/tools/export_fixtures.py" --check
