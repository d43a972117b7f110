"""The event model: a lossless, JSON-serialisable mirror of Gemini's ``types.Content``.

Every message Koroku stores is one ``Event``, one of:

* ``SessionEvent``: one ``Content`` (a user message, a model reply, or the
  function responses of one model step), part for part.
* ``CompactionEvent``: a summary that stands in for older turns.

A third kind of stored row, ``RewindEvent`` ("the context resumes from the
state before message M"), is deliberately *not* an ``Event``: it never
reaches the model, so the agent, compaction and repair code (which match on
``Event``) never see one. The store reads it into ``StoredMessage.rewind``
(with ``event=None``) and applies it when it builds the context.

Parts keep everything the API needs back: ``thought`` flags, function call and
response ``id``s, and the raw ``thought_signature`` bytes (as base64 text).
Any part this model has no typed class for (inline data, files, code
execution, and whatever a future SDK adds) is kept as an ``OtherPart`` holding
the SDK's own JSON, so nothing is ever rejected or lost.

The JSON shape follows the seed design: parts carry a ``kind`` discriminator,
events an ``event_type`` discriminator.

The parts are defined in ``parts.py``, the events and rows in ``records.py``;
import them from here, which names them all.
"""

from __future__ import annotations

# Each module's ``__all__`` is what the package re-exports: the names are listed once.
from koroku_tui.events import parts, records, usage
from koroku_tui.events.parts import *  # noqa: F403
from koroku_tui.events.records import *  # noqa: F403
from koroku_tui.events.usage import *  # noqa: F403

__all__ = parts.__all__ + records.__all__ + usage.__all__
