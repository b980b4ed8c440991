"""The Hello-Agents textbook's NoteTool listings (section 9.4) run unmodified apart from imports."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "textbook_9_4_notes.py"


def test_textbook_9_4_listings_run(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, encoding="utf-8")
    assert proc.returncode == 0, proc.stderr
    assert "✅ Note created successfully, ID: note_" in proc.stdout
    assert "scenario 3: 3 note packets" in proc.stdout
    cited = re.search(r"9\.4\.4 context: \d+ characters, (\d+) notes cited, 2 history messages", proc.stdout)
    assert cited and int(cited.group(1)) >= 1, "additional_packets reached the built context"
    assert '"total_notes": 4' in proc.stdout and '"blocker": 2' in proc.stdout
    assert len(list((tmp_path / "project_notes").glob("note_*.md"))) == 4
    assert (tmp_path / "project_notes" / "notes_index.json").exists()
    assert len(list((tmp_path / "data_pipeline_refactoring_notes").glob("note_*.md"))) == 2
