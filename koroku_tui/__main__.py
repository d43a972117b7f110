"""``python -m koroku_tui`` runs the same entry point as ``koroku-tui``."""

from koroku_tui.cli import main

raise SystemExit(main())
