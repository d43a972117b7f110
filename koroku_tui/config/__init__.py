"""Bottom layer: Koroku's settings and where they come from.

``Settings`` is built once, by ``cli.py``, and passed down; nothing below the
CLI reads the environment for Koroku's own knobs.
"""
