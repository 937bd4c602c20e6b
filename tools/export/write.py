"""write.py: fixtures into HDF5 files, deterministically, with their provenance."""

import os
import re

import h5py
import numpy as np
import torch

from .run import Digest

# --------------------------------------------------------------------------
# Writing HDF5 deterministically: no timestamps anywhere (datasets with
# track_times=False, groups through a creation property list that says the
# same), so two runs give byte-identical files.

def new_file(path):
    return h5py.File(path, "w", libver="earliest")


def new_group(parent, name):
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    return h5py.Group(h5py.h5g.create(parent.id, name.encode(), gcpl=gcpl))


def set_attrs(g, attrs):
    for k, v in attrs.items():
        if isinstance(v, str):
            # A plain str (torch.__version__ is a str subclass that h5py would
            # turn into a fixed-length NumPy string): h5py then writes a
            # variable-length UTF-8 string.
            g.attrs[k] = str.__str__(v)
        elif isinstance(v, (bool, int, np.integer)):
            g.attrs[k] = np.int64(v)
        else:
            raise TypeError((k, v))


def put_dataset(g, name, a, role):
    if name in g:
        raise SystemExit(f"export_fixtures: dataset {name!r} written twice")
    # A 0-d array is stored as a SCALAR dataspace; int64 (token ids) as int64.
    ds = g.create_dataset(name, data=a, dtype="<i8" if a.dtype == np.int64 else "<f4", track_times=False)
    ds.attrs["role"] = role


def write_data(g, run):
    """The run's datasets into group g; a tensor of more than LARGE elements
    as its digest and its first and last rows (README: "Large tensors")."""
    samples = {}
    for name in sorted(run.data):
        a, role = run.data[name]
        if not isinstance(a, Digest):
            put_dataset(g, name, a, role)
            continue
        samples[f"{name}.sha256"] = a.sha256
        samples[f"{name}.shape"] = str(a.shape)
        samples[f"{name}.role"] = role
        put_dataset(g, f"{name}.first_row", a.first_row, "sample")
        put_dataset(g, f"{name}.last_row", a.last_row, "sample")
    set_attrs(g, samples)


_PROVENANCE = None


def provenance():
    """Attributes describing the PyTorch that computed the numbers."""
    global _PROVENANCE
    if _PROVENANCE is None:
        config = torch.__config__.show()
        m = re.search(r"CPU capability usage: (\S+)", config)
        cpu_capability = m.group(1) if m else "unknown"
        m = re.search(r"BLAS_INFO=([^,\s]+)", config)
        blas_info = m.group(1) if m else "unknown"
        # The BLAS is a shared library chosen at run time (Debian alternatives),
        # so record the one this process really mapped after a matmul.
        a = torch.ones(2, 2)
        a @ a
        libs = []
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and os.path.basename(parts[-1]).startswith("libblas.so"):
                    p = os.path.realpath(parts[-1])
                    if p not in libs:
                        libs.append(p)
        blas = f"BLAS_INFO={blas_info}; libblas.so.3 loaded: {', '.join(libs) if libs else 'none'}"
        _PROVENANCE = dict(torch_version=torch.__version__, torch_config=config,
                           blas=blas, cpu_capability=cpu_capability)
    return _PROVENANCE


def write_fixture(g, run, variant, mirrors, command, extra=None):
    """A complete fixture of one chapter into g (a file's root or a sweep group)."""
    set_attrs(g, dict(chapter=run.chapter, variant=variant, mirrors=mirrors, **provenance(), command=command))
    set_attrs(g, run.attrs)
    if extra:
        set_attrs(g, extra)
    write_data(g, run)
