"""The main screen's widgets: transcript, tool sidebar, context gauge, prompt, approval modal.

The App (``koroku_tui.ui.app``) composes them and routes the agent's hooks to
them as Textual messages (``koroku_tui.ui.main.messages``).
"""
