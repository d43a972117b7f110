"""How a hook handler wants to be called, decided once from its signature.

The seed design calls hooks with keywords (``on_tool_result(result=,
call_name=, call_args=, context=)``); Koroku's own handlers take one typed
payload. Both are welcome: :func:`call_form` looks at the handler when it is
registered, so emitting costs one dictionary per keyword handler and nothing
more for a payload handler.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection
from typing import Any

__all__ = ["PAYLOAD", "call_form"]

PAYLOAD = None
"""The call form of a handler that takes the typed payload as its one positional argument."""

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def call_form(
    hook: str, handler: Callable[..., Any], offered: Collection[str]
) -> frozenset[str] | None:
    """The keywords to call ``handler`` with, or ``PAYLOAD`` (None) for the one-payload form.

    Keyword form when the handler has keyword-only parameters or ``**kwargs``,
    or when every parameter it requires is named after one of ``offered``
    (``def handler(payload)`` and ``def handler(message, context)`` both
    qualify); it then gets the offered keywords it accepts. Otherwise it must
    take one positional argument: the payload. Raises ``ValueError`` (one
    sentence) for a handler that can be called neither way.
    """
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):  # some builtins: assume the classic form
        return PAYLOAD
    params = list(signature.parameters.values())
    takes_any_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    named_positional = [p for p in params if p.kind in _POSITIONAL]
    named = {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
    accepted = frozenset(offered) if takes_any_keyword else frozenset(named & set(offered))
    # ``print`` has keyword-only parameters but none of the hook's: it wants the
    # payload. ``def h(message=None, context=None)`` names only hook keywords:
    # it wants the keywords even though none is required.
    prefers_keywords = bool(accepted) and (
        takes_any_keyword
        or any(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params)
        or (
            bool(named_positional)
            and all(
                p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.name in offered
                for p in named_positional
            )
        )
    )
    if prefers_keywords and _binds(signature, **dict.fromkeys(accepted)):
        return accepted
    if _binds(signature, None):
        return PAYLOAD
    offered_text = ", ".join(f"{k}=" for k in offered)
    raise ValueError(
        f"the handler for {hook} takes neither one payload argument nor the hook's keywords "
        f"({offered_text})"
    )


def _binds(signature: inspect.Signature, *args: object, **kwargs: object) -> bool:
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return False
    return True
