"""Koroku's Textual user interface: the app, its screens and widgets.

Everything here may import Textual and Rich; nothing below this layer
(``events``, ``store``, ``agent``) may import from it. Text that came from the
model, a tool or the database is rendered through ``koroku_tui.ui.safe_text``
so it is always shown literally.
"""
