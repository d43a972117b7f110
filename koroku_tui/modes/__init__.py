"""The ways Koroku runs, between the CLI and the layers below.

``headless`` (``--print``), ``demo`` (``--demo``, a scripted Gemini on
loopback), and ``wiring``, which turns one ``Settings`` value into the parts a
run needs. The full-screen app itself lives in ``ui/``.
"""
