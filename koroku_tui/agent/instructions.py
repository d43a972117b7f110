"""The words Koroku says to the model: system instruction, guardrail, compaction."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from koroku_tui.agent.context.instruction_files import LoadedInstructions
from koroku_tui.agent.context.lasting_facts import FACTS_HEADING
from koroku_tui.agent.context.project_files import size_text
from koroku_tui.agent.tools.answer_words import NUDGE_END, NUDGE_START
from koroku_tui.agent.tools.approval_rules import NO_RULES, ApprovalRules, Verdict
from koroku_tui.agent.tools.spec import ToolKind, ToolSpec
from koroku_tui.text.safety import escape_hidden

DESCRIPTION_CHARS = 300
"""A tool's description in the list is cut here (one line; an MCP server's can be long)."""


def approval_note(spec: ToolSpec, rules: ApprovalRules = NO_RULES) -> str:
    """What the tool list says of ``spec``'s approval, as the rules and the spec decide it.

    A ``tools`` rule speaks for every call; a tool that runs commands may have
    some allowed by ``allow_commands`` (not listed: the rules' words stay out
    of the instruction). ``deny_commands`` are learnt from a denied call's answer.
    """
    said = rules.tool_verdict(spec.name)
    if said is Verdict.DENY:
        return " (the user's rules deny it: do not call it)"
    if said is Verdict.ALLOW:
        return ""
    if said is Verdict.ASK or spec.needs_approval:
        if spec.command_argument is not None and rules.allow_commands and said is None:
            return " (asks the user first, unless the user's rules allow the command)"
        return " (asks the user first)"
    return ""


def tool_lines(tools: Iterable[ToolSpec], rules: ApprovalRules = NO_RULES) -> str:
    """One line per tool: ``- name: description``, saying which ones ask the user first."""
    lines = []
    for spec in tools:
        description = " ".join(spec.description.split())
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1] + "…"
        asks = approval_note(spec, rules)
        lines.append(
            f"- {spec.name}{asks}: {description}" if description else f"- {spec.name}{asks}"
        )
    return "\n".join(lines)


def system_instruction(
    memory_dir: Path,
    tools: Iterable[ToolSpec],
    rules: ApprovalRules = NO_RULES,
    files: LoadedInstructions | None = None,
    memories: str = "",
) -> str:
    """Koroku's standing instruction, naming the real memory folder and the tools offered.

    ``rules`` (the user's approval rules) say which tools ask first, run freely
    or are denied. ``memories``: the block of kept memories
    (``context.remembered.memories_text``), after Koroku's words. ``files``:
    the instruction files read for this run, appended last
    (:func:`instruction_files_text`); without either, the text is Koroku's alone.
    """
    offered = list(tools)
    listed = tool_lines(offered, rules)
    kinds = {spec.kind for spec in offered}
    # The advice on recall and memory is for the built-in tools of those kinds
    # (it names them): an agent offered none of them is not told to call them.
    recall = (
        "When the user refers to the past (something decided, discussed, done or said "
        "before, 'last time', 'as we agreed') and it is not in this conversation, search "
        "before answering: call search_history with a few meaningful words, then "
        "read_session with the hit's session_id and around_message_id to read around it "
        "(its before/after lines say how to page). Do not guess about the past: if "
        "nothing is found, say so. When an answer comes from an earlier conversation, "
        "say which one (for example 'in session 12').\n"
        if ToolKind.READS_HISTORY in kinds
        else "\n"
    )
    memory = (
        " read_memory reads today's file, any day's (date dd-mm-yyyy), or lists the "
        "days that have one (date 'list')."
        if ToolKind.READS_MEMORY in kinds
        else ""
    )
    keeping = (
        "When the user asks you to remember something, or states a lasting fact or "
        "preference about themselves (diet, family, where they live, how they like "
        "answers), call remember with it as one short sentence: it is then in your "
        "instructions in every later conversation. When the user asks you to forget "
        "something you remember, or a memory is wrong, call forget with its number.\n"
        if ToolKind.KEEPS_MEMORIES in kinds
        else ""
    )
    return (
        "You are Koroku, a helpful personal assistant running in the user's terminal. "
        + (f"You have these tools:\n{listed}\n" if listed else "You have no tools.\n")
        + "Every earlier conversation is kept in full, each one a numbered session. "
        + recall
        + f"Your memory folder is {memory_dir}. It holds summaries of earlier conversations, "
        "one file per day named dd-mm-yyyy.md with one '[HH:MM]: summary' line per "
        f"summary (the folder may not exist yet).{memory}\n"
        + keeping
        + "Be concise. When a request is ambiguous or a step is risky, ask rather than guess."
        + memories
        + instruction_files_text(files)
    )


def instruction_files_text(files: LoadedInstructions | None) -> str:
    """The instruction files, each framed with its path, for the end of the system instruction.

    ``""`` when none is used. Hidden characters in them are sent as visible
    ``\\u`` escapes, as the user sees them in the app's view ("Show
    instructions"): a file cannot tell the model what its reader cannot see.
    When the cap cut them, the model is told where and what was left out.
    """
    if files is None or not files.used:
        return ""
    framed = []
    for file in files.used:
        where = escape_hidden(str(file.path))
        whose = "the user's own standing instructions" if file.scope == "personal" else "project"
        text = escape_hidden(file.read.text).rstrip("\n")
        if file.read.cut:
            text += (
                f"\n[Koroku: cut here: the instruction files together exceed "
                f"{size_text(files.cap)}, the most Koroku sends.]"
            )
        framed.append(f"--- {where} ({whose}) ---\n{text}\n--- end of {where} ---")
    left_out = ""
    if files.left_out:
        names = ", ".join(escape_hidden(str(path)) for path in files.left_out)
        left_out = f"\n[Koroku: left out, past the {size_text(files.cap)} limit: {names}.]"
    return (
        "\n\nInstruction files follow: the user's own standing instructions first, then "
        "the project's from its outermost folder to the nearest (a nearer file is more "
        "specific). Each is framed with its path. Follow them unless the user says "
        "otherwise.\n\n" + "\n\n".join(framed) + left_out
    )


def guardrail_instruction(calls_made: int, *, limit: int) -> str:
    """Sent (not stored) once a turn has used its tool budget; tools are withdrawn.

    Says how many calls ran: with many calls in one step, those beyond the
    ``limit`` were answered "Not run", and a model told only the total would
    take them for done.
    """
    ran = min(calls_made, limit)
    skipped = calls_made - ran
    if skipped:
        counted = (
            f"You made {calls_made} tool calls for this request; {ran} of them ran, which is "
            f"the limit for one turn, and the other {skipped} "
            f"{'was' if skipped == 1 else 'were'} not run (their results say so)."
        )
    else:
        counted = f"You made {ran} tool calls for this request, which is the limit for one turn."
    return (
        f"{counted} Tools are no longer available. Stop here: summarise what you did "
        "and what you found, say what is left to do, and ask the user whether and how to continue."
    )


def repeated_call_nudge(name: str, times: int) -> str:
    """Added to a tool result when the model repeats the same call verbatim."""
    return (
        f"{NUDGE_START}{times}th identical call to {name} in a row with the same "
        f"arguments and it returns the same kind of result. {NUDGE_END}"
    )


COMPACTION_INSTRUCTION = (
    "Summarise the conversation below so that it can replace it in your memory. "
    "Write plain prose, at most four paragraphs, no headings or lists:\n"
    "1. The user's objective, first.\n"
    "2. What was done: files read, commands run, changes made.\n"
    "3. Blockers, loops and learnings.\n"
    "4. The current outcome and the next step.\n"
    "If an earlier summary is included, fold its content into this one.\n"
    f"After the summary, write a line holding only '{FACTS_HEADING}', then one line per "
    "lasting fact about the user worth knowing in every later conversation (who they "
    "are, their preferences, standing decisions), each starting with '- ' and written as "
    "one short sentence that stands on its own, e.g. '- The user is vegetarian.' Leave "
    "out what only concerns the task at hand; write '- none' when there is nothing lasting."
)

SUMMARY_UNAVAILABLE = "Summary unavailable."
