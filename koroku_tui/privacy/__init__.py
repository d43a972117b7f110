"""Bottom layer: what keeps a user's data private.

File modes of the Koroku home, the live secrets to redact, the process's own
privacy (no core dumps, no ptrace), and the log that never holds a key.
"""
