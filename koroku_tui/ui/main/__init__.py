"""The main screen and its widgets: transcript, tool sidebar, context gauge, prompt, approval modal.

``MainScreen`` (``screen.py``) composes them, owns their keys, and receives
the agent's hooks as Textual messages (``messages.py``, posted by
``bridge.py``, handled in ``agent_events.py``).
"""
