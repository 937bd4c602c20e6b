"""reference_blas.py: torch on the reference BLAS, whatever Debian's alternatives say.

The fixtures are the reference (netlib) BLAS's bits. Debian chooses which
libblas.so.3 (and liblapack.so.3) a process loads with update-alternatives,
and where OpenBLAS is installed (libopenblas0-pthread: the benchmarks, or a
package that depends on it) it is the default. A tool that computes with
torch and compares bits calls use_reference_blas() before it imports torch:
the process starts again with the reference BLAS's own directories first on
LD_LIBRARY_PATH, so the loader finds them before the alternatives' link.
"""

import os
import sys

REFERENCE_BLAS = [d for d in ("/usr/lib/x86_64-linux-gnu/blas", "/usr/lib/x86_64-linux-gnu/lapack")
                  if os.path.isdir(d)]


def use_reference_blas():
    """Re-executes this script with the reference BLAS first, once."""
    if "torch" in sys.modules:
        raise SystemExit("reference_blas: call use_reference_blas() before importing torch")
    if REFERENCE_BLAS and not os.environ.get("LD_LIBRARY_PATH", "").startswith(":".join(REFERENCE_BLAS)):
        path = ":".join(REFERENCE_BLAS + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p])
        os.execve(sys.executable, [sys.executable] + sys.argv, dict(os.environ, LD_LIBRARY_PATH=path))
