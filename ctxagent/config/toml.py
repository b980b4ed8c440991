"""TOML reading on every supported Python: `tomllib` (3.11+) or its twin `tomli` (3.10)."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError, loads
else:  # pragma: no cover - Python 3.10; tomli is a dependency there (pyproject.toml)
    from tomli import TOMLDecodeError, loads

__all__ = ["TOMLDecodeError", "loads"]
