"""Turn a scripted :class:`Reply` into GenerateContentResponse JSON.

Ids and signatures are assigned here, each time a reply is served, so a
reused reply (the ``on_empty`` fallback) never repeats a signature.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from koroku_tui.fake_gemini import deep_json
from koroku_tui.fake_gemini.script import Call, Part, Reply, Text
from koroku_tui.fake_gemini.wire import JsonObject, encode_signature, estimate_text_tokens


@dataclass(frozen=True)
class RenderedStep:
    """A served step: wire parts per chunk, plus the usage numbers to report."""

    chunks: list[list[JsonObject]]
    finish_reason: str | None
    prompt_tokens: int
    candidates_tokens: list[int]
    """Cumulative candidates count after each chunk."""
    thoughts_tokens: list[int]
    """Cumulative thoughts count after each chunk."""
    model: str
    response_id: str
    block_reason: str | None = None
    cached_tokens: int | None = None


def _signature_target(reply: Reply) -> int | None:
    """Flat index of the part that gets the auto signature, if any."""
    parts = reply.parts
    if not reply.auto_signature or not parts or any(p.signature for p in parts):
        return None
    for index, part in enumerate(parts):
        if isinstance(part, Call):
            return index
    return len(parts) - 1


def _part_tokens(part: Part) -> int:
    if isinstance(part, Text):
        return estimate_text_tokens(part.text)
    return estimate_text_tokens(part.name + deep_json.dumps(dict(part.args), sort_keys=True))


def _wire_part(part: Part, signature: bytes | None) -> JsonObject:
    if isinstance(part, Text):
        wire: JsonObject = {"text": part.text}
        if part.thought:
            wire["thought"] = True
    else:
        wire = {
            "functionCall": {
                "id": part.id or secrets.token_hex(4),
                "name": part.name,
                "args": dict(part.args),
            }
        }
    signature = part.signature or signature
    if signature is not None:
        wire["thoughtSignature"] = encode_signature(signature)
    return wire


def render_step(
    reply: Reply,
    *,
    model: str,
    prompt_tokens: int,
    new_signature: Callable[[], bytes],
    remember: Callable[[bytes], None],
) -> RenderedStep:
    """Assign ids and signatures, and count tokens, for one serving of ``reply``."""
    target = _signature_target(reply)
    chunks: list[list[JsonObject]] = []
    candidates: list[int] = []
    thoughts: list[int] = []
    flat = 0
    cand_total = thought_total = 0
    # A reply without parts still streams one (finishing) event.
    for chunk in reply.chunks or ((),):
        wire_chunk: list[JsonObject] = []
        for part in chunk:
            signature = new_signature() if flat == target else None
            if part.signature is not None:
                remember(part.signature)
            wire_chunk.append(_wire_part(part, signature))
            if isinstance(part, Text) and part.thought:
                thought_total += _part_tokens(part)
            else:
                cand_total += _part_tokens(part)
            flat += 1
        chunks.append(wire_chunk)
        candidates.append(cand_total)
        thoughts.append(thought_total)
    usage = reply.usage
    if usage.candidates_tokens is not None:
        candidates[-1:] = [usage.candidates_tokens]
    if usage.thoughts_tokens is not None:
        thoughts[-1:] = [usage.thoughts_tokens]
    return RenderedStep(
        chunks=chunks,
        finish_reason=reply.finish_reason,
        prompt_tokens=prompt_tokens if usage.prompt_tokens is None else usage.prompt_tokens,
        candidates_tokens=candidates,
        thoughts_tokens=thoughts,
        model=model,
        response_id=secrets.token_urlsafe(12),
        block_reason=reply.block_reason,
        cached_tokens=usage.cached_tokens,
    )


def _usage_json(
    prompt: int, candidates: int, thoughts: int, cached: int | None = None
) -> JsonObject:
    usage: JsonObject = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
    if cached is not None:
        usage["cachedContentTokenCount"] = cached
    usage["totalTokenCount"] = prompt + candidates + thoughts
    return usage


def _blocked_json(step: RenderedStep, reason: str) -> JsonObject:
    # What the API sends for a refused prompt: feedback and usage, no candidates.
    return {
        "promptFeedback": {"blockReason": reason},
        "usageMetadata": _usage_json(step.prompt_tokens, 0, 0),
        "modelVersion": step.model,
        "responseId": step.response_id,
    }


def _response_json(
    step: RenderedStep, parts: list[JsonObject], finish: bool, candidates: int, thoughts: int
) -> JsonObject:
    candidate: JsonObject = {}
    if parts:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish and step.finish_reason is not None:
        candidate["finishReason"] = step.finish_reason
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": _usage_json(step.prompt_tokens, candidates, thoughts, step.cached_tokens),
        "modelVersion": step.model,
        "responseId": step.response_id,
    }


def stream_events(step: RenderedStep) -> list[JsonObject]:
    """One whole GenerateContentResponse per chunk; the last one finishes."""
    if step.block_reason is not None:
        return [_blocked_json(step, step.block_reason)]
    last = len(step.chunks) - 1
    return [
        _response_json(step, parts, i == last, step.candidates_tokens[i], step.thoughts_tokens[i])
        for i, parts in enumerate(step.chunks)
    ]


def _mergeable(a: JsonObject, b: JsonObject) -> bool:
    return (
        "text" in a
        and "text" in b
        and bool(a.get("thought")) == bool(b.get("thought"))
        and not ("thoughtSignature" in a and "thoughtSignature" in b)
    )


def unary_response(step: RenderedStep) -> JsonObject:
    """The non-streaming answer: all parts, adjacent same-kind texts merged."""
    if step.block_reason is not None:
        return _blocked_json(step, step.block_reason)
    merged: list[JsonObject] = []
    for part in (p for chunk in step.chunks for p in chunk):
        if merged and _mergeable(merged[-1], part):
            prev = merged[-1]
            combined = {**prev, "text": prev["text"] + part["text"]}
            if "thoughtSignature" in part:
                combined["thoughtSignature"] = part["thoughtSignature"]
            merged[-1] = combined
        else:
            merged.append(dict(part))
    candidates = step.candidates_tokens[-1] if step.candidates_tokens else 0
    thoughts = step.thoughts_tokens[-1] if step.thoughts_tokens else 0
    return _response_json(step, merged, True, candidates, thoughts)
