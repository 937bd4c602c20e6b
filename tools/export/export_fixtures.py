#!/usr/bin/python3
"""Export litattn's fixtures: what real PyTorch computes for each chapter.

Every number a litattn test expects comes from here, computed by PyTorch
running the notebooks' own code (ch03.ipynb and exercise-solutions.ipynb,
their classes copied unchanged into tools/export/), never retyped and never
computed by our C code. The schema is fixtures/README.md; the chapters and their variants
are chapters/chapters.txt (read through tools/export/chapters.py).

    /usr/bin/python3 tools/export/export_fixtures.py                 # regenerate fixtures/
    /usr/bin/python3 tools/export/export_fixtures.py --out DIR       # write them elsewhere
    /usr/bin/python3 tools/export/export_fixtures.py --check         # regenerate and compare
    /usr/bin/python3 tools/export/export_fixtures.py --check --only sweep.h5 ch03_3_simplified_attention.book.h5
    /usr/bin/python3 tools/export/export_fixtures.py --regenerate DIR --depfile DIR.d   # the build's export (regen test)
    /usr/bin/python3 tools/export/export_fixtures.py --custom my.h5 --chapter ch03_6_2_multihead_attention \\
        --seed 7 [--seed exercise_3_3=8] [--skip K] [--tokens T --d-in D [--batch B] --inputs-seed S] \\
        [--set NAME=VALUE]...  (e.g. --set num_heads=4 --set dropout=0.1 --set exercise_3_3.tokens=16)

This file is the command line; the exporter is the package tools/export/:
  ch03_3.py .. ch03_6.py  the notebooks' classes and each chapter's cells, by section
  run.py                  Run, below;  variants.py  the book's variants (chapters.txt)
  sweep.py                sweep.h5;    write.py     HDF5 files and their provenance
  files.py                the parallel export, --check, --regenerate;  cli.py  the options

How a fixture is made. A chapter's function (tools/export/ch03_*.py) runs the
notebook's cells in PyTorch, in the order the C chapter runs them, through a `Run`:
  - settings (d_out, num_heads, dropout, ...) come from Run.setting_*(name,
    book value), which records each as an attribute, so a fixture holds
    exactly the settings its chapter reads (lib/runtime/config.c);
  - torch.manual_seed(book seed) is Run.manual_seed(site, book seed), which
    seeds with the configuration's seed and records `seed` / `<site>.seed`;
  - a module assigned to a notebook variable is registered (Run.module): its
    parameters are recorded as drawn (role weight, `<variable>.<state_dict
    key>`); every forward() of it or of its submodules then has its locals
    recorded at return (sys.setprofile; role output, `<module path>.<local>`),
    and every mask its Dropout modules draw is re-drawn from the saved
    generator state (role random, `<dropout path>.noise[.k]`);
  - Run.keep(name, tensor) records what a cell prints or the C keeps by name.
A name recorded again replaces the earlier value, as a notebook variable does.
Tensors of more than 2^18 elements are stored as a digest (README).

Transcripts (fixtures/book/) are named by their file prefix:
  000 = 000_efa2f07078f272d9.txt   seed-123 notebook, builds V1 without re-seeding
  001 = 001_0f0553d38278198f.txt   sections 3.3 and 3.4 with seed 42
  002 = 002_264268caed6f9ca7.txt   lecture notes: seed 123 / 789 code, prints nothing
  003 = 003_bf56d3c9ab88b228.txt   the book's own text of 3.4.1 (no cells)
  004 = 004_e8e336bf22e41ef3.txt   seed-123 notebook, In [15] scaling demo

Needs only torch, h5py and numpy (Debian's python3-torch and python3-h5py).
"""

import os
import sys

sys.dont_write_bytecode = True  # loading the exporter must not litter tools/ with __pycache__

# The fixtures are the reference BLAS's bits, whatever Debian's alternatives
# say (tools/export/reference_blas.py): the process starts again with it first.
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tools/: the package export
from export.reference_blas import use_reference_blas  # noqa: E402

use_reference_blas()

from export.cli import main  # noqa: E402  (tools/export/: the exporter, one module per part)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
