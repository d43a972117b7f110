"""Total recall, store side: what the index holds, how a question finds it, what is left out.

Real SQLite in tmp_path through ``SessionManager``. ``search_history`` is the
model's search (natural language, the current context excluded);
``search`` is the history screen's (ctrl+r), with the same builder and ranking.
"""

from __future__ import annotations

import time

import pytest
from helpers.events import model, user
from hostile.search_queries import HOSTILE_QUERIES

from koroku_tui.events import (
    CompactionEvent,
    Event,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
)
from koroku_tui.store import MATCH_END, MATCH_START, SessionManager
from koroku_tui.store.search import MAX_TERMS, RESULT_CHARS, build_match_query

DAY = 86_400.0


def call(name: str, **args: object) -> SessionEvent:
    part = FunctionCallPart(function_call=FunctionCallData(name=name, args=dict(args)))
    return SessionEvent(role="model", parts=[part])


def result(name: str, output: object) -> SessionEvent:
    part = FunctionResponsePart(
        function_response=FunctionResponseData(name=name, response={"output": output}),
        fc_metadata=FCMetadata(name=name, args={}),
    )
    return SessionEvent(role="user", parts=[part])


def summary(text: str, kept_from_id: int | None = None) -> CompactionEvent:
    return CompactionEvent.from_summary(text, kept_from_id=kept_from_id)


async def past_session(store: SessionManager, *events: SessionEvent | CompactionEvent) -> list[int]:
    """Write ``events`` into a fresh session, then leave it for a new current one."""
    await store.new_session()
    ids = [await store.add_message(event) for event in events]
    await store.new_session()
    return ids


async def found(store: SessionManager, query: str) -> list[int]:
    return [hit.message_id for hit in (await store.search_history(query)).hits]


# -- what the index holds ------------------------------------------------------------


async def test_calls_results_and_summaries_are_searchable_thoughts_are_not(
    store: SessionManager,
) -> None:
    said, called, answered, summed, thought = await past_session(
        store,
        user("please look at the deploy"),
        call("run_command", command="rsync --archive /srv/zanzibar"),
        result("run_command", "copied 42 files to marrakesh"),
        summary("We agreed the deploy uses blue green switching."),
        model("done", thought="secretly pondering quokkas"),
    )
    assert await found(store, "zanzibar") == [called]  # an argument
    assert set(await found(store, "run_command")) == {called, answered}  # a call's name
    assert await found(store, "marrakesh") == [answered]  # a tool's output
    assert await found(store, "blue green") == [summed]
    assert set(await found(store, "deploy")) == {said, summed}
    assert await found(store, "quokkas") == []  # thoughts stay out
    assert thought not in await found(store, "done pondering")


async def test_a_huge_tool_result_is_indexed_up_to_the_cap(store: SessionManager) -> None:
    head = "alpha " * ((RESULT_CHARS - 100) // 6)
    (row,) = await past_session(store, result("read_file", head + " omega " * 2_000 + " zulu"))
    assert await found(store, "alpha") == [row]
    assert await found(store, "omega") == [row]  # just inside the cap
    assert await found(store, "zulu") == []  # far past it


async def test_words_match_on_their_stems_and_without_accents(store: SessionManager) -> None:
    compaction, cafe = await past_session(
        store, user("the compaction of session six"), user("lunch at the Café Müller")
    )
    assert await found(store, "compacted") == [compaction]
    assert await found(store, "compacting sessions") == [compaction]
    assert await found(store, "cafe muller") == [cafe]


# -- the question ------------------------------------------------------------------------


async def test_a_hit_needs_any_meaningful_word_and_more_words_rank_higher(
    store: SessionManager,
) -> None:
    only_backup, both, neither = await past_session(
        store,
        user("the backup finished late"),
        user("we rewrote the backup script in bash"),
        user("what did we do about it"),
    )
    hits = await found(store, "what did we decide about the backup script")
    assert hits[0] == both
    assert set(hits) == {only_backup, both}  # "what did we ... about" alone finds nothing
    assert neither not in hits


async def test_rare_words_outrank_common_ones(store: SessionManager) -> None:
    common = [user(f"the server log number {n}") for n in range(20)]
    ids = await past_session(store, *common, user("a server named xylophone"))
    assert (await found(store, "server xylophone"))[0] == ids[-1]
    assert (await found(store, "log xylophone"))[0] == ids[-1]


async def test_only_stop_words_are_searched_anyway(store: SessionManager) -> None:
    whole, part = await past_session(store, user("to be or not to be"), user("not now"))
    assert await found(store, "not to be") == [whole, part]  # any word, the most first


async def test_quotes_keep_a_phrase(store: SessionManager) -> None:
    together, apart = await past_session(
        store, user("the nightly backup ran"), user("nightly we ran a backup")
    )
    assert await found(store, '"nightly backup"') == [together]
    assert set(await found(store, "nightly backup")) == {together, apart}


def test_the_builder_quotes_every_term_and_joins_with_or() -> None:
    assert build_match_query("what about the backup script") == '"backup" OR "script"'
    assert build_match_query('NEAR( "nightly run" x"y') == '"nightly run" OR "NEAR(" OR "x" OR "y"'
    assert build_match_query("kyo", prefix_last=True) == '"kyo"*'
    assert build_match_query("kyo ", prefix_last=True) == '"kyo"'
    assert build_match_query("the", prefix_last=False) == '"the"'
    assert build_match_query('" * -') is None


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=lambda q: repr(q[:20]) + f"/{len(q)}")
async def test_hostile_queries_are_never_an_error(store: SessionManager, query: str) -> None:
    await past_session(store, user("nightly backup AND( NEAR c++ text:role ^x -y 'quoted'"))
    page = await store.search_history(query)
    assert page.total >= len(page.hits)
    assert isinstance(await store.search(query), list)
    assert len(await store.list_sessions()) == 1  # the tables are still there


async def test_a_long_pasted_query_is_cut_to_its_first_terms(store: SessionManager) -> None:
    # Each term costs FTS5 a pass over its matches: a pasted page keeps the first few.
    await past_session(store, *[user(f"word{n} filler text") for n in range(300)])
    pasted = " ".join(f"word{n}" for n in range(3_000))
    match = build_match_query(pasted)
    assert match is not None and match.count(" OR ") == MAX_TERMS - 1
    page = await store.search_history(pasted)
    assert page.total == MAX_TERMS


# -- ranking ------------------------------------------------------------------------------


async def test_recent_rows_win_among_equals_and_relevance_beats_recency(
    store: SessionManager,
) -> None:
    now = time.time()
    await store.new_session()
    old = await store.add_message(user("backup rotation policy"), created_at=now - 300 * DAY)
    new = await store.add_message(user("backup rotation policy"), created_at=now - DAY)
    weak = await store.add_message(
        user("rotation " + "unrelated words " * 30), created_at=now - 3600
    )
    await store.new_session()
    assert await found(store, "backup rotation") == [new, old, weak]
    assert (await store.search("backup rotation"))[0].message_id == new


async def test_ctrl_r_search_finds_what_the_model_finds(store: SessionManager) -> None:
    await past_session(
        store,
        user("the nightly backup goes to the NAS"),
        model("backup done"),
        summary("We chose restic for backups."),
    )
    question = "nightly backups restic "  # a trailing space: no prefix while typing
    model_hits = [h.message_id for h in (await store.search_history(question, limit=50)).hits]
    user_hits = [h.message_id for h in await store.search(question)]
    assert user_hits == model_hits and len(user_hits) == 3


async def test_ctrl_r_matches_the_last_word_as_a_prefix(store: SessionManager) -> None:
    (row,) = await past_session(store, user("the kyoto station"))
    assert [h.message_id for h in await store.search("kyo")] == [row]
    assert await found(store, "kyo") == []  # the model types whole words


# -- what the model already sees is left out ----------------------------------------------


async def test_the_current_session_without_compaction_is_left_out(store: SessionManager) -> None:
    (past,) = await past_session(store, user("the lighthouse keeper"))
    await store.add_message(user("tell me about the lighthouse"))
    await store.add_message(model("The lighthouse keeper..."))
    page = await store.search_history("lighthouse")
    assert [h.message_id for h in page.hits] == [past]
    assert page.total == 1


async def test_after_a_compaction_only_the_context_is_left_out(store: SessionManager) -> None:
    await store.new_session()
    early = await store.add_message(user("lighthouse one"))
    older_summary = await store.add_message(summary("lighthouse summary one"))
    hidden = await store.add_message(user("lighthouse two"))
    kept = await store.add_message(model("lighthouse three"))
    latest = await store.add_message(summary("lighthouse summary two", kept_from_id=kept))
    after = await store.add_message(user("lighthouse four"))
    page = await store.search_history("lighthouse")
    assert {h.message_id for h in page.hits} == {early, older_summary, hidden}
    assert page.total == 3
    assert not {kept, latest, after} & {h.message_id for h in page.hits}


async def test_rows_between_a_compaction_and_a_later_floor_are_counted_as_past(
    store: SessionManager,
) -> None:
    # kept_from_id past the compaction's own row (another window added rows
    # while the summary was written): the rows in between left the context.
    await store.new_session()
    early = await store.add_message(user("lighthouse one"))
    await store.add_message(summary("lighthouse summary", kept_from_id=early + 3))
    gap = await store.add_message(user("lighthouse gap"))
    kept = await store.add_message(user("lighthouse kept"))
    assert kept == early + 3
    page = await store.search_history("lighthouse")
    assert {h.message_id for h in page.hits} == {early, gap}
    assert page.total == 2


async def test_recalls_are_not_found_again_ahead_of_what_they_found(
    store: SessionManager,
) -> None:
    (fact,) = await past_session(store, model("The nightly backup runs at 02:00."))
    await past_session(
        store,
        call("search_history", query="nightly backup"),
        result("search_history", "1 past message matches: The «nightly» «backup» runs at 02:00."),
        call("read_memory", date="list"),
    )
    page = await store.search_history("nightly backup")
    assert [h.message_id for h in page.hits] == [fact]
    assert page.total == 1


async def test_a_phrase_with_only_stop_words_around_it_searches_the_phrase(
    store: SessionManager,
) -> None:
    (fact,) = await past_session(store, user("the nightly backup is set"))
    await past_session(store, *[user(f"what did we say about thing {n}") for n in range(20)])
    page = await store.search_history('what did we say about "nightly backup"')
    assert [h.message_id for h in page.hits] == [fact]
    assert page.total == 1


async def test_a_tool_result_hit_is_the_tools_not_the_users(store: SessionManager) -> None:
    said, answered = await past_session(
        store, user("check the zanzibar log"), result("read_file", "zanzibar: all good")
    )
    roles = {h.message_id: h.role for h in (await store.search_history("zanzibar")).hits}
    assert roles == {said: "user", answered: "tool"}


async def test_one_typed_letter_is_not_yet_a_prefix(store: SessionManager) -> None:
    (row,) = await past_session(
        store,
        user("kyoto"),
    )
    assert await store.search("k") == []  # a letter alone would match most of the index
    assert [h.message_id for h in await store.search("ky")] == [row]


async def test_total_counts_every_match_and_limit_is_clamped(store: SessionManager) -> None:
    await past_session(store, *[user(f"lighthouse log {n}") for n in range(60)])
    await store.add_message(user("lighthouse in the context"))
    page = await store.search_history("lighthouse", limit=500)
    assert (len(page.hits), page.total, page.more) == (50, 60, 10)
    assert len((await store.search_history("lighthouse", limit=0)).hits) == 1
    assert len((await store.search_history("lighthouse", limit=-3)).hits) == 1
    assert (await store.search_history("lighthouse")).total == 60
    assert await store.search_history("   ") == type(page)(hits=[], total=0)


async def test_a_hit_says_where_it_is_and_snippets_are_about_300_characters(
    store: SessionManager,
) -> None:
    before = "words before the fact " * 40
    after = " and words after the fact" * 40
    await store.new_session("Backups")
    row = await store.add_message(user(before + "the nightly backup moved to Tuesday" + after))
    session = store.session_id
    await store.new_session()
    (hit,) = (await store.search_history("nightly backup")).hits
    assert (hit.session_id, hit.session_title, hit.message_id) == (session, "Backups", row)
    assert (hit.kind, hit.role) == ("session", "user")
    plain = hit.snippet.replace(MATCH_START, "").replace(MATCH_END, "")
    assert 150 <= len(plain) <= 310
    assert f"{MATCH_START}nightly{MATCH_END} {MATCH_START}backup{MATCH_END}" in hit.snippet
    assert hit.snippet.count(MATCH_START) == hit.snippet.count(MATCH_END)
    assert "Tuesday" in plain


# -- bulk insert (the benchmark's) ---------------------------------------------------------


async def test_add_messages_stores_many_in_one_go(store: SessionManager) -> None:
    events: list[Event] = [user("first words"), model("an answer"), summary("summed up")]
    ids = await store.add_messages(events, created_at=[10.0, 11.0, 12.0])
    assert ids == sorted(ids) and len(ids) == 3
    info = await store.get_session(store.session_id)
    assert (info.message_count, info.compaction_count, info.title) == (3, 1, "first words")
    assert [m.created_at for m in await store.load_all()] == [10.0, 11.0, 12.0]
    assert await store.load_messages() == [events[2]]  # the context follows the compaction
    with pytest.raises(ValueError, match="2 times given for 1 events"):
        await store.add_messages([user("x")], created_at=[1.0, 2.0])


async def test_a_branch_a_rewind_abandoned_is_past_and_found(store: SessionManager) -> None:
    await store.new_session()
    await store.add_message(user("lighthouse kept"))
    await store.add_message(model("lighthouse answer kept"))
    abandoned = await store.add_message(user("lighthouse abandoned"))
    gone = await store.add_message(model("lighthouse answer abandoned"))
    await store.rewind(abandoned)
    await store.add_message(user("lighthouse after the rewind"))
    page = await store.search_history("lighthouse")
    assert {h.message_id for h in page.hits} == {abandoned, gone}
    assert page.total == 2


async def test_a_forks_copies_are_found_once_its_source_is_deleted(store: SessionManager) -> None:
    source = store.session_id
    await store.add_message(user("the marmalade recipe"))
    await store.add_message(model("oranges and sugar"))
    fork = await store.fork(source)
    grandchild = await store.fork(fork.id)
    await store.new_session()
    assert [h.session_id for h in (await store.search_history("marmalade")).hits] == [source]
    await store.delete_session(source)
    assert [h.session_id for h in (await store.search_history("marmalade")).hits] == [fork.id]
    await store.delete_session(fork.id)
    assert [h.session_id for h in (await store.search_history("marmalade")).hits] == [grandchild.id]


async def test_in_a_fork_the_source_rows_its_context_copies_are_not_hits(
    store: SessionManager,
) -> None:
    source = store.session_id
    copied = await store.add_message(user("the marmalade recipe"))
    later = await store.add_message(model("marmalade needs oranges"))
    asked = await store.add_message(user("and the marmalade jars?"))
    fork = await store.fork(source, asked)  # copies the first two rows
    await store.switch_session(fork.id)
    page = await store.search_history("marmalade")
    # The fork's model sees the copies of #1 and #2 already; #3 it never saw.
    assert [h.message_id for h in page.hits] == [asked]
    assert page.total == 1
    assert not {copied, later} & {h.message_id for h in page.hits}
