"""The harness: the files that make a model a disciplined agent in this project.

Profile files (`profile`), the AGENTS.md chain (`chain`, `imports`, `nested`), Agent Skills
(`skills`), the memory files' appends (`memory_write`), the system layer they form
(`layer`) and `ctxagent init`'s starting files (`init`). Reference: docs/harness.md.
"""
