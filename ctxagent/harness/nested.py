"""Nested AGENTS.md files below the working directory, added when the agent first reads
a file in their subtree.

`NestedRules.see(paths)` takes paths the agent touched (relative to the working directory
or absolute); for each, the folders between the working directory (exclusive: its own
file is in the chain already) and the path's folder are checked, outermost first, with
the chain's names; a file not seen before is loaded into the chain's remaining budget
(imports expanded) and returned. `paths_in(text)` finds path-like words in a tool call.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable

from ctxagent.harness.chain import Chain, add_file, candidate_names, pick

#: Path-like words looked at in one tool call (arguments and result), at most.
MAX_WORDS = 400
_WORD = re.compile(r"[\w.~+-]*[\w+-]/[\w./+-]*|[\w+-]+\.[A-Za-z0-9]{1,10}")


def paths_in(text: str) -> list[str]:
    """Path-like words of `text` (`src/app.py`, `pkg/`, `README.md`), first MAX_WORDS, unique."""
    return list(dict.fromkeys(m.group(0).rstrip(".") for m in _WORD.finditer(text)))[:MAX_WORDS]


class NestedRules:
    """Tracks which nested files are loaded for a working directory `cwd` whose chain is `chain`."""

    def __init__(self, cwd: Path, chain: Chain, *, fallbacks: Iterable[str], home: Path | None = None) -> None:
        self.cwd = Path(os.path.realpath(cwd))
        self.chain = chain
        self.names = candidate_names(list(fallbacks))
        self.home = home
        self.checked: set[Path] = set()

    def see(self, paths: Iterable[str | Path]) -> list:
        """The nested files newly loaded because of `paths` (LoadedFile list, outermost first)."""
        new = []
        for raw in paths:
            for folder in self._folders(raw):
                if folder in self.checked:
                    continue
                self.checked.add(folder)
                path = pick(folder, self.names)
                if path is not None:
                    loaded = add_file(self.chain, path, "nested", "repo", self.chain.root or self.cwd, self.home)
                    if loaded is not None:
                        new.append(loaded)
        return new

    def _folders(self, raw: str | Path) -> list[Path]:
        """The folders strictly below `cwd` down to `raw`'s folder; [] outside `cwd` or missing."""
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else self.cwd / path
        try:
            real = Path(os.path.realpath(path))
            folder = real if real.is_dir() else real.parent
            if not real.exists():
                return []
            parts = folder.relative_to(self.cwd).parts
        except (OSError, ValueError):
            return []
        if ".git" in parts or ".ctxagent" in parts:
            return []
        return [self.cwd.joinpath(*parts[:i]) for i in range(1, len(parts) + 1)]
