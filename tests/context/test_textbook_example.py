"""The Hello-Agents chapter-9 usage (section 9.3.4) runs unmodified apart from imports, offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "textbook_9_3_4.py"


def test_textbook_9_3_4_runs_offline_and_produces_every_section(tmp_path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(EXAMPLE.parent), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert re.findall(r"^\[(.+?)\]$", text, flags=re.MULTILINE) == ["Role & Policies", "Task", "State", "Evidence", "Context", "Output"]
    assert "如何优化Pandas的内存占用?" in text and "资深的Python数据工程顾问" in text
    assert "category代替object" in text  # retrieved evidence
    assert "Memory: 用户正在开发数据分析工具,使用Python和Pandas" in text  # memory
    assert "user: 我打算使用Python和Pandas,已经完成了CSV读取模块" in text  # history
    assert "请基于以上信息" in text


def test_F14_the_example_uses_ctxagents_real_memory_and_rag_tools(tmp_path, monkeypatch) -> None:
    """The example teaches the real classes, not stand-ins (breaker F14)."""
    import importlib

    from ctxagent.tools import MemoryTool, RAGTool

    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.chdir(tmp_path)
    tools = importlib.import_module("textbook_tools")
    assert tools.MemoryTool is MemoryTool and issubclass(tools.RAGTool, RAGTool)
    rag = tools.RAGTool(knowledge_base_path="./knowledge_base")
    assert rag.run({"action": "stats"})["documents"] == len(list(tools.SAMPLES.glob("*.md")))
    assert (tmp_path / "knowledge_base" / "rag_knowledge_base.db").is_file()
