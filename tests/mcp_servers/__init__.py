"""MCP servers the MCP client tests start: one by the book, one over HTTP, and hostile ones.

Each module but ``raw_rpc`` is a standalone script, run as
``[sys.executable, path, *args]``; ``helpers.mcp_servers`` names them.
"""
