"""Hypothesis strategies for Gemini Contents and the events that hold them.

Shared by the event round-trip properties (``test_events.py``) and the wire
contract (``test_wire_contract.py``).
"""

from __future__ import annotations

from google.genai import types
from hypothesis import strategies as st

from koroku_tui.events import SessionEvent

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=4)

# Signatures are arbitrary bytes; 0xFB 0xFF encodes to "+/8=" so the standard
# and URL-safe alphabets differ, which is where string comparisons go wrong.
signatures = st.none() | st.binary(max_size=48) | st.just(b"\xfb\xff\xfe\xfb\xef")
thought_flags = st.none() | st.booleans()
ids = st.none() | st.text(min_size=1, max_size=12)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=20)


@st.composite
def text_parts(draw: st.DrawFn) -> types.Part:
    return types.Part(
        text=draw(st.text()), thought=draw(thought_flags), thought_signature=draw(signatures)
    )


@st.composite
def call_parts(draw: st.DrawFn) -> types.Part:
    call = types.FunctionCall(id=draw(ids), name=draw(names), args=draw(st.none() | json_objects))
    return types.Part(function_call=call, thought_signature=draw(signatures))


@st.composite
def response_parts(draw: st.DrawFn) -> types.Part:
    response = types.FunctionResponse(
        id=draw(ids),
        name=draw(names),
        response=draw(
            st.none()
            | st.fixed_dictionaries({"output": json_values})
            | st.fixed_dictionaries({"error": st.text()})
            | json_objects
        ),
    )
    return types.Part(function_response=response, thought_signature=draw(signatures))


@st.composite
def other_parts(draw: st.DrawFn) -> types.Part:
    """Part kinds the seed design rejected; they must round-trip too."""
    signature = draw(signatures)
    choice = draw(st.integers(min_value=0, max_value=4))
    if choice == 0:
        blob = types.Blob(data=draw(st.binary(max_size=64)), mime_type="image/png")
        return types.Part(inline_data=blob, thought_signature=signature)
    if choice == 1:
        file = types.FileData(file_uri="gs://bucket/" + draw(names), mime_type="text/plain")
        return types.Part(file_data=file, thought_signature=signature)
    if choice == 2:
        code = types.ExecutableCode(code=draw(st.text()), language=types.Language.PYTHON)
        return types.Part(executable_code=code, thought_signature=signature)
    if choice == 3:
        result = types.CodeExecutionResult(outcome=types.Outcome.OUTCOME_OK, output=draw(st.text()))
        return types.Part(code_execution_result=result, thought_signature=signature)
    # A function call with a field the typed part does not model.
    call = types.FunctionCall(name=draw(names), args={}, will_continue=True)
    return types.Part(function_call=call, thought_signature=signature)


contents = st.builds(
    lambda role, parts: types.Content(role=role, parts=parts),
    st.sampled_from(["user", "model"]),
    st.lists(text_parts() | call_parts() | response_parts() | other_parts(), max_size=6),
)

histories = st.lists(contents, max_size=8).map(
    lambda items: [SessionEvent.from_content(content) for content in items]
)
"""Random stored histories: any roles, any parts, valid or not for the API."""
