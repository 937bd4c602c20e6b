"""export: litattn's fixture exporter, one module per part (tools/export/export_fixtures.py runs it).

    ch03_3, ch03_4, ch03_5, ch03_6   the notebooks' classes, copied unchanged, and
                                     each chapter's cells in PyTorch, by book section
    run                              Run: what one chapter reads and records; Digest
    variants                         the book's variants of each chapter (chapters.txt)
    sweep                            the sweep: every chapter beyond the book's sizes
    write                            writing HDF5 deterministically; provenance
    files                            every file as a job, in parallel; --check; --regenerate
    cli                              the command line, and --custom

The command line, and how a fixture is made, are in tools/export/export_fixtures.py.
"""

import os

TOOLS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_ROOT = os.path.dirname(TOOLS_DIR)
FIXTURES_DIR = os.path.join(REPO_ROOT, "fixtures")
SCRIPT = "tools/export/export_fixtures.py"  # the `command` attribute of the standard fixtures
