"""The NoteTool listings of the Hello-Agents textbook, section 9.4, run against ctxagent.

Each block below is a listing from chapter 9 (English edition) with only the imports
changed (`hello_agents.tools` -> `ctxagent.tools`, `hello_agents.context` ->
`ctxagent.context`). Where a listing is a method of an agent class, its body is kept
as a function taking the tool (the LLM calls around it are not part of NoteTool).

Run: `python examples/textbook_9_4_notes.py [WORKDIR]` (default: a new temporary
folder, since the listings write to `./project_notes` and similar relative paths).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from datetime import datetime
from typing import Dict, List

from ctxagent.context import ContextBuilder, ContextConfig, ContextPacket, Message
from ctxagent.tools import NoteTool


def listing_9_4_1_scenario_1(notes: NoteTool) -> None:
    """9.4.1, Scenario 1: long-term project tracking."""
    # Record task status
    notes.run({
        "action": "create",
        "title": "Refactoring Project - Phase 1",
        "content": "Completed refactoring of data model layer, test coverage reached 85%. Next will refactor business logic layer.",
        "note_type": "task_state",
        "tags": ["refactoring", "phase1"]
    })

    # Record blocker
    notes.run({
        "action": "create",
        "title": "Dependency Conflict Issue",
        "content": "Found some third-party library versions incompatible, need to resolve. Impact scope: 3 modules in business logic layer.",
        "note_type": "blocker",
        "tags": ["dependency", "urgent"]
    })


def listing_9_4_3_create() -> str:
    """9.4.3 (1), usage example of create."""
    notes = NoteTool(workspace="./project_notes")

    note_id = notes.run({
        "action": "create",
        "title": "Refactoring Project - Phase 1",
        "content": """## Completion Status
Completed refactoring of data model layer, test coverage reached 85%.

## Next Steps
Refactor business logic layer""",
        "note_type": "task_state",
        "tags": ["refactoring", "phase1"]
    })

    print(f"✅ Note created successfully, ID: {note_id}")
    return note_id


def listing_9_4_1_scenario_3(note_tool: NoteTool, user_input: str) -> List[ContextPacket]:
    """9.4.1, Scenario 3: notes retrieved and turned into context packets (body of `run`)."""
    # 1. Retrieve relevant notes
    relevant_notes = note_tool.run({
        "action": "search",
        "query": user_input,
        "limit": 3
    })

    # 2. Convert note content to ContextPacket
    note_packets = []
    for note in relevant_notes:
        note_packets.append(ContextPacket(
            content=note['content'],
            timestamp=note['updated_at'],
            token_count=len(note['content']) // 4,
            relevance_score=0.7,
            metadata={"type": "note", "note_type": note['type']}
        ))
    return note_packets


def retrieve_relevant_notes_9_4_4(note_tool: NoteTool, query: str, limit: int = 3) -> List[Dict]:
    """9.4.4, ProjectAssistant._retrieve_relevant_notes."""
    try:
        # Prioritize retrieving blocker and action type notes
        blockers = note_tool.run({
            "action": "list",
            "note_type": "blocker",
            "limit": 2
        })

        # General search
        search_results = note_tool.run({
            "action": "search",
            "query": query,
            "limit": limit
        })

        # Merge and deduplicate
        all_notes = {note['note_id']: note for note in blockers + search_results}
        return list(all_notes.values())[:limit]

    except Exception as e:
        print(f"[WARNING] Note retrieval failed: {e}")
        return []


def notes_to_packets_9_4_4(notes: List[Dict]) -> List[ContextPacket]:
    """9.4.4, ProjectAssistant._notes_to_packets."""
    packets = []

    for note in notes:
        content = f"[Note: {note['title']}]\n{note['content']}"

        packets.append(ContextPacket(
            content=content,
            timestamp=datetime.fromisoformat(note['updated_at']),
            token_count=len(content) // 4,  # Simple estimation
            relevance_score=0.75,  # Notes have high relevance
            metadata={
                "type": "note",
                "note_type": note['type'],
                "note_id": note['note_id']
            }
        ))

    return packets


def save_as_note_9_4_4(note_tool: NoteTool, project_name: str, user_input: str, response: str) -> None:
    """9.4.4, ProjectAssistant._save_as_note."""
    try:
        # Determine what type of note to save
        if "problem" in user_input.lower() or "blocker" in user_input.lower():
            note_type = "blocker"
        elif "plan" in user_input.lower() or "next" in user_input.lower():
            note_type = "action"
        else:
            note_type = "conclusion"

        note_tool.run({
            "action": "create",
            "title": f"{user_input[:30]}...",
            "content": f"## Question\n{user_input}\n\n## Analysis\n{response}",
            "note_type": note_type,
            "tags": [project_name, "auto_generated"]
        })

    except Exception as e:
        print(f"[WARNING] Failed to save note: {e}")


def build_system_instructions_9_4_4(project_name: str) -> str:
    """9.4.4, ProjectAssistant._build_system_instructions."""
    return f"""You are the long-term assistant of the {project_name} project.

Your responsibilities:
1. Provide coherent suggestions based on historical notes
2. Track project progress and pending issues
3. Cite relevant historical notes when answering
4. Provide specific, actionable next-step suggestions

Note:
- Prioritize issues marked as blocker
- State the source of your suggestions (notes, memory or knowledge base)
- Keep an overall view of project progress"""


def update_history_9_4_4(conversation_history: List[Message], user_input: str, response: str) -> List[Message]:
    """9.4.4, ProjectAssistant._update_history (returns the history instead of setting it)."""
    conversation_history.append(
        Message(content=user_input, role="user", timestamp=datetime.now())
    )
    conversation_history.append(
        Message(content=response, role="assistant", timestamp=datetime.now())
    )

    # Limit history length
    if len(conversation_history) > 10:
        conversation_history = conversation_history[-10:]
    return conversation_history


def run_context_9_4_4(note_tool: NoteTool, context_builder: ContextBuilder, project_name: str,
                      conversation_history: List[Message], user_input: str) -> str:
    """9.4.4, ProjectAssistant.run, steps 1-3 (the LLM call of step 4 is not part of NoteTool)."""
    # 1. Retrieve relevant notes from NoteTool
    relevant_notes = retrieve_relevant_notes_9_4_4(note_tool, user_input)

    # 2. Convert notes to ContextPacket
    note_packets = notes_to_packets_9_4_4(relevant_notes)

    # 3. Build optimized context
    optimized_context = context_builder.build(
        user_query=user_input,
        conversation_history=conversation_history,
        system_instructions=build_system_instructions_9_4_4(project_name),
        additional_packets=note_packets
    )
    return optimized_context


def listing_9_5_4_collaboration(note_tool: NoteTool, log_analysis: str) -> None:
    """9.5.4 (2): a terminal finding recorded as a blocker note."""
    # Record as blocker note
    note_tool.run({
        "action": "create",
        "title": "Database Slow Query Issue",
        "content": f"## Problem Description\nFound multiple slow queries affecting system performance\n\n## Log Analysis\n```\n{log_analysis}\n```\n\n## Next Steps\n1. Analyze slow query SQL\n2. Add indexes\n3. Optimize query logic",
        "note_type": "blocker",
        "tags": ["performance", "database"]
    })


def plan_mode_packets_9_6_3(note_tool: NoteTool) -> List[ContextPacket]:
    """9.6.3, CodebaseMaintainer._preprocess_by_mode, "plan" branch."""
    packets = []
    task_notes = note_tool.run({
        "action": "list",
        "note_type": "task_state",
        "limit": 3
    })

    if task_notes:
        content = "\n".join([f"- {note['title']}" for note in task_notes])
        packets.append(ContextPacket(
            content=f"[Current Tasks]\n{content}",
            timestamp=datetime.now(),
            token_count=len(content) // 4,
            relevance_score=0.8,
            metadata={"type": "task_plan", "source": "notes"}
        ))
    return packets


def main(workdir: str | None = None) -> dict:
    """Run every listing in `workdir` (a new temporary folder by default); return the summary."""
    os.chdir(workdir or tempfile.mkdtemp(prefix="textbook_9_4_"))
    print(f"working in {os.getcwd()}")

    notes = NoteTool(workspace="./project_notes")
    listing_9_4_1_scenario_1(notes)
    note_id = listing_9_4_3_create()
    print(notes.run({"action": "read", "note_id": note_id})["metadata"]["title"])

    packets = listing_9_4_1_scenario_3(notes, "dependency conflict in the business logic layer")
    print(f"scenario 3: {len(packets)} note packets")

    assistant_notes = NoteTool(workspace="./data_pipeline_refactoring_notes")
    save_as_note_9_4_4(assistant_notes, "data_pipeline_refactoring",
                       "We have completed refactoring of the data model layer. Next plan is to refactor the business logic layer.",
                       "Good progress; refactor the services next.")
    save_as_note_9_4_4(assistant_notes, "data_pipeline_refactoring",
                       "I hit a dependency version conflict problem. How should I resolve this?",
                       "Pin versions and isolate the environment.")
    relevant = retrieve_relevant_notes_9_4_4(assistant_notes, "dependency version conflict")
    print(f"9.4.4: {len(notes_to_packets_9_4_4(relevant))} packets from {len(relevant)} notes")
    context_builder = ContextBuilder(config=ContextConfig(max_tokens=4000))
    history: List[Message] = []
    question = "While refactoring the business logic layer, I hit a dependency version conflict. How do I resolve it?"
    context = run_context_9_4_4(assistant_notes, context_builder, "data_pipeline_refactoring", history, question)
    history = update_history_9_4_4(history, question, "Pin versions and isolate the environment.")
    print(f"9.4.4 context: {len(context)} characters, {context.count('[Note: ')} notes cited, "
          f"{len(history)} history messages")

    listing_9_5_4_collaboration(notes, "slow query: SELECT * FROM orders (2.3 s)")
    print(f"9.6.3: {len(plan_mode_packets_9_6_3(notes))} plan packets")

    # View note summary (9.4.4 and 9.6.4)
    print(assistant_notes.run({"action": "summary"}))
    summary = notes.run({"action": "summary"})
    print("📊 Note summary:")
    print(json.dumps(summary, indent=2, ensure_ascii=False))
    return summary


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
