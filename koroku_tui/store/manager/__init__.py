"""The parts ``SessionManager`` is made of, one job per module.

``koroku_tui.store.session_manager.SessionManager`` is the only class callers
use. It is the seed's facade (opening, closing, ``add_message``,
``load_messages``, ``delete``, ``db``) over the mixins of this package, lowest
first:

- ``core``: the state every part shares (the one connection, its lock, the
  current session) and the helpers around it: transactions, shielded writes,
  session lookups, the store's clock.
- ``context_cache``: the current session's context in memory: read on first
  use, kept in step with our writes and with rows other processes add.
- ``turns``: one writer per session: the lease a turn holds, the checks every
  write makes against it, and the writes besides ``add_message``.
- ``sessions``: the session list: new, switch, rename, delete, get, list.
- ``pages``: reading stored rows a page at a time, for the UI and the recall tools.
- ``history_search``: full-text search over every session.
- ``memories``: the facts kept across sessions (and suggested ones), and
  which of them a request's system instruction holds.
- ``usage``: the usage statistics (tokens, requests, tool calls), on a
  connection of their own.
- ``rewind_fork``: branching: rewind the current session, fork any session.
- ``file_history``: what files held before Koroku wrote them, and the restores
  that put them back.
- ``at_exit``: closing a store its program never closed, so the program exits.

Why mixins rather than collaborator objects: every part reads and writes the
same few fields under the same lock (which session is current, whether it is
stored yet, its context in memory), so collaborators would share one state
object and ``SessionManager`` would forward some forty methods to them, each
docstring written twice. Mixins over one base keep the public API on
``SessionManager`` as callers know it, with no forwarding layer. The SQL is
already composed in: module functions taking the connection (``queries``,
``search``, ``branching``, ``lease``, ``context`` one level up); the mixins
only decide what to lock, which session is meant and which errors to raise.

Each mixin inherits the parts it calls, so mypy checks every call and a
reader finds a helper by following the base classes.
"""
