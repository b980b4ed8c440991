"""The todo board: `board` holds `TodoBoard` (todos.json storage and its rules).
The model's plain-text board is rendered by `ctxagent.tools.todo`; the coloured board
for people by `ctxagent.cli.todo_cmd`."""
