"""case_files.py: what the unit tests' case files share (kernel_cases.py,
backward_cases.py, printer_cases.py, random_cases.py): the torch build a
file was made with, and groups and datasets written so that two runs give
byte-identical files. Import has no side effects."""

import re

import h5py
import numpy as np
import torch


def provenance(blas=True):
    """The root attributes naming the torch build: version, config, CPU
    capability and, with blas, the BLAS it calls."""
    config = torch.__config__.show()
    m = re.search(r"CPU capability usage: (\S+)", config)
    out = {"torch_version": str(torch.__version__), "torch_config": config,
           "cpu_capability": m.group(1) if m else "unknown"}
    if blas:
        b = re.search(r"BLAS_INFO=([^,\s]+)", config)
        out["blas"] = f"BLAS_INFO={b.group(1) if b else 'unknown'}"
    return out


def group(parent, name):
    """A new group under parent, with no creation times anywhere."""
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    return h5py.Group(h5py.h5g.create(parent.id, name.encode(), gcpl=gcpl))


def put(grp, name, tensor, role):
    """tensor as a float32 dataset `name` of grp, with its "role" attribute."""
    a = np.array(tensor.detach().to(torch.float32).contiguous().numpy(), dtype=np.float32, order="C")
    ds = grp.create_dataset(name, data=a, track_times=False)
    ds.attrs["role"] = role
