"""Tools from MCP servers: the only place Koroku imports the ``mcp`` SDK.

``status.py`` holds the plain values the UI reads (no SDK there).
"""
