"""Settings for the whole suite."""

import os
import sys

# Some machines set PYTHONDONTWRITEBYTECODE, so that every process (each
# xdist worker, each `heapscope` a CLI test starts) compiled heapscope and
# pytest re-wrote every test module's asserts from scratch: about half a
# second of CPU a process.  The suite keeps its bytecode.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
