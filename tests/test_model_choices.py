"""The models a session may switch to: ``models.list`` as the real SDK pages through the fake,
the list cached in the home for a day, and what is offered when the API cannot be asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google import genai
from google.genai import errors

from koroku_tui.agent.model_choices import (
    CACHE_FILENAME,
    FRESH_FOR,
    ModelChoice,
    model_choices,
    offered_models,
)
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.fake_gemini import FakeGemini, ModelInfo

GENERATING = [
    "gemini-3-flash-preview",
    "gemini-3-pro-preview",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
]
"""The fake's catalogue (it serves any model) less its embedding model."""


async def test_the_fake_lists_its_models_in_pages_as_the_api_does(
    fake: FakeGemini, client: genai.Client
) -> None:
    pager = await client.aio.models.list(config={"page_size": 2})
    assert [m.name for m in pager.page] == [
        "models/gemini-3-flash-preview",
        "models/gemini-3-pro-preview",
    ]
    names = [model.name async for model in pager]
    assert len(names) == 5 and names[-1] == "models/gemini-embedding-001"
    pages = [r for r in fake.requests if r.action == "list"]
    assert [r.query.get("pageToken") for r in pages] == [None, ["page-2"], ["page-4"]]
    assert all(r.path == "/v1beta/models" or r.path == "/v1/models" for r in pages)
    with pytest.raises(errors.ClientError) as refused:
        await client.aio.models.list(config={"page_token": "not-ours"})
    assert refused.value.code == 400


async def test_only_models_that_generate_are_offered_from_every_page(
    client: genai.Client,
) -> None:
    offered = await offered_models(client, page_size=2)
    assert [m.name for m in offered] == GENERATING
    assert offered[1] == ModelChoice("gemini-3-pro-preview", 1_048_576, "Gemini 3 Pro Preview")


async def test_the_list_is_cached_for_a_day_then_asked_again(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    first = await model_choices(client, tmp_path, ["x"], now=1000.0)
    assert (first.source, [m.name for m in first.models]) == ("api", GENERATING)
    cached = json.loads((tmp_path / CACHE_FILENAME).read_text())
    assert cached["fetched_at"] == 1000.0 and len(cached["models"]) == 4
    again = await model_choices(client, tmp_path, ["x"], now=1000.0 + FRESH_FOR - 1)
    assert (again.source, again.models) == ("cache", first.models)
    assert len([r for r in fake.requests if r.action == "list"]) == 1
    later = await model_choices(client, tmp_path, ["x"], now=1000.0 + FRESH_FOR + 1)
    assert later.source == "api"
    assert len([r for r in fake.requests if r.action == "list"]) == 2


async def test_without_the_api_the_cache_whatever_its_age_else_the_configured(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.api_key = "another-key"  # the API refuses: a revoked key, say
    configured = await model_choices(client, tmp_path, ["mine", "", "mine", "default"], now=1.0)
    assert configured.source == "configured"
    assert configured.models == (ModelChoice("mine"), ModelChoice("default"))
    assert configured.problem is not None and "API key not valid" in configured.problem
    fake.api_key = "test-key"
    await model_choices(client, tmp_path, [], now=2.0)  # fetched and cached
    fake.api_key = "another-key"
    stale = await model_choices(client, tmp_path, ["mine"], now=2.0 + 10 * FRESH_FOR)
    assert (stale.source, stale.fetched_at) == ("cache", 2.0)
    assert [m.name for m in stale.models] == GENERATING


async def test_a_broken_cache_is_asked_again_and_no_client_is_the_configured(
    tmp_path: Path,
) -> None:
    (tmp_path / CACHE_FILENAME).write_text("{not json")
    offline = make_client(base_url="http://127.0.0.1:9", api_key="test-key")
    try:
        said = await model_choices(offline, tmp_path, ["mine"])
    finally:
        await close_client(offline)
    assert (said.source, said.models) == ("configured", (ModelChoice("mine"),))
    none = await model_choices(None, tmp_path, ["mine"])
    assert (none.source, none.problem) == ("configured", "no client")


async def test_a_name_no_request_could_carry_is_never_offered(tmp_path: Path) -> None:
    # The id goes into the URL path as it is: "x#y" would post to /models/x.
    listed = {name: ModelInfo() for name in ("gemini-ok", "evil#x", "../up", "a b", "q?r")}
    with FakeGemini(models=listed) as server:
        client = make_client(base_url=server.base_url, api_key="test-key")
        try:
            offered = await model_choices(client, tmp_path, [], now=1.0)
        finally:
            await close_client(client)
    assert [m.name for m in offered.models] == ["gemini-ok"]
    cache = tmp_path / CACHE_FILENAME
    cache.write_text(json.dumps({"fetched_at": 1.0, "models": [{"name": "x#y"}, {"name": "ok"}]}))
    cached = await model_choices(None, tmp_path, [], now=2.0)
    assert [m.name for m in cached.models] == ["ok"]


@pytest.mark.parametrize("fetched_at", ["1e400", "1e20", "NaN"])
async def test_a_cache_dated_at_no_time_is_not_used(tmp_path: Path, fetched_at: str) -> None:
    # Its date is shown ("offered on ..."): "1e400" made that line raise in the palette.
    (tmp_path / CACHE_FILENAME).write_text(
        f'{{"fetched_at": {fetched_at}, "models": [{{"name": "cached", "display_name": {{}}}}]}}'
    )
    said = await model_choices(None, tmp_path, ["mine"], now=1000.0)
    assert (said.source, said.models) == ("configured", (ModelChoice("mine"),))


async def test_a_cache_dated_in_the_future_is_asked_again(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    # A clock set ahead, then put right: the list must not stay "fresh" until that date.
    await model_choices(client, tmp_path, [], now=1000.0 + 365 * FRESH_FOR)
    again = await model_choices(client, tmp_path, [], now=1000.0)
    assert (again.source, again.fetched_at) == ("api", 1000.0)
    assert len([r for r in fake.requests if r.action == "list"]) == 2


async def test_a_cached_display_name_that_is_not_text_is_left_out(tmp_path: Path) -> None:
    (tmp_path / CACHE_FILENAME).write_text(
        '{"fetched_at": 900, "models": [{"name": "cached", "display_name": {"x": 1}}]}'
    )
    said = await model_choices(None, tmp_path, [], now=1000.0)
    assert said.models == (ModelChoice("cached"),)
