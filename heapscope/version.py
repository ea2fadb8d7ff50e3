"""The version ``heapscope --version`` prints.

The installed package's metadata (``importlib.metadata``) is the truth for an
install, editable or not; a checkout run without installing falls back to the
``version`` of its pyproject.toml, so the number lives in one place.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

#: pyproject.toml of a source checkout (heapscope/ sits beside it)
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def package_version() -> str:
    """heapscope's version: the installed metadata's, else pyproject's, else "unknown"."""
    try:
        return metadata.version("heapscope")
    except metadata.PackageNotFoundError:
        pass
    try:
        with open(PYPROJECT, "rb") as f:
            return tomllib.load(f)["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"
