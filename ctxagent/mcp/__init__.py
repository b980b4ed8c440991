"""MCP client: tools of Model Context Protocol servers (stdio and streamable HTTP), on the
official `mcp` SDK, run on one background event loop for the synchronous agent loop.
Formats, trust and failure rules: docs/mcp.md."""
