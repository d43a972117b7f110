"""Migration 10 (the index form) and search in Chinese, Japanese and Korean. Prints figures.

Run: ``uv run python bench/index_forms_bench.py`` (a minute or two), or
``--quick`` for a smoke run (2,000 messages; the numbers mean little). No
assertions beyond "the run completed".

1. Two version-7 files written in SQL the way version 7 wrote them (each
   message's searchable text indexed as it was), 100 messages a session:
   an English history (``recall_bench``'s filler) and a history of
   Japanese, Chinese and Korean sentences written without spaces, with
   ``FACTS`` planted in it.
2. The first open migrates each to the current schema: seconds (the open
   of the migrated file beside it) and the file's size before and after.
3. On the CJK history: how many planted facts a word of one, two, three or
   more characters finds in the first five hits of ``search_history``, and
   the latency of that search and of the history screen's (p50, p95).
4. The issue's first idea beside it: a trigram index (``tokenize =
   'trigram'``) over the same text: seconds to build, bytes added, and how
   many facts its ``MATCH`` and ``LIKE`` find.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

from recall_bench import session_events

from koroku_tui.events import Event, SessionEvent, TextPart
from koroku_tui.store import SessionManager, schema
from koroku_tui.store.search import indexed_role, searchable_text

PER_SESSION = 100
ROUNDS = 5

_JA_TEXT = """東京 大阪 天気 会議 予定 電話 写真 旅行 仕事 友達 家族 映画 音楽 料理 買い物 病院
銀行 電車 新幹線 飛行機 空港 ホテル コーヒー お茶 朝ご飯 週末 来週 先月 今日 明日 時間
場所 値段 資料 報告書 請求書 予算 契約 会社 学校 先生 図書館 公園 庭 パソコン サーバー
バックアップ メール スケジュール 確認した 送った 準備した 決めた 変更した 予約した"""
_JA = _JA_TEXT.split()
_JA_GLUE = "のはがをにでとも"
_ZH_TEXT = """北京 上海 天气 会议 计划 电话 照片 旅行 工作 朋友 家人 电影 音乐 做饭 购物 医院 银行
火车站 飞机 机场 酒店 餐厅 咖啡 早饭 周末 下周 上个月 今天 明天 昨天 时间 地方 价格 资料
报告 发票 预算 合同 公司 学校 老师 学生 图书馆 公园 花园 电脑 服务器 备份 数据库 邮件
我们 他们 需要 已经 准备 确认"""
_ZH = _ZH_TEXT.split()
_ZH_GLUE = "的了在和是"
_KO_TEXT = """서울 부산 날씨 회의 일정 전화 사진 여행 친구 가족 영화 음악 요리 쇼핑 병원 은행 기차
비행기 공항 호텔 식당 커피 주말 다음주 지난달 오늘 내일 어제 시간 장소 가격 자료 보고서 예산
계약 회사 학교 선생님 학생 도서관 공원 정원 컴퓨터 서버 백업 메일"""
_KO = _KO_TEXT.split()
_KO_GLUE = ["의", "은", "는", "이", "가", "을", "를", "에", "에서", "와", "도"]
_KO_VERBS = ["확인했다", "보냈다", "준비했다", "정했다", "바꿨다", "예약했다"]

#: A fact in a sentence of its language, and the word (1, 2, 3+ characters) that must find it.
FACTS: tuple[tuple[str, str], ...] = (
    ("土用の丑の日に鰻を食べた", "鰻"),
    ("電車に傘を忘れてしまった", "傘"),
    ("眼鏡の度数は左が二点五だった", "眼鏡"),
    ("富士山の山頂で御来光を見た", "御来光"),
    ("歯医者の予約は金曜の午後です", "歯医者"),
    ("我的护照在九月到期", "护照"),
    ("周六去长城爬山", "长城"),
    ("我对青霉素过敏", "青霉素"),
    ("钥匙放在抽屉里了", "抽屉"),
    ("猫咪喜欢晒太阳", "猫"),
    ("여권은 삼월에 만료된다", "여권"),
    ("자전거 체인을 고쳤다", "자전거"),
    ("페니실린에 알레르기가 있다", "페니실린"),
    ("김치찌개를 끓였다", "찌개"),
    ("곰", "곰"),
)


#: Words of the filler itself: each matches thousands of rows at 100,000 messages.
COMMON = ("会議", "天气", "날씨", "東京", "服务器", "の天気")


def cjk_sentence(rng: random.Random) -> str:
    """A sentence of one of the three languages, as people write them."""
    language = rng.randrange(3)
    words = rng.randint(6, 30)
    if language == 0:
        return "".join(rng.choice(_JA) + rng.choice(_JA_GLUE) for _ in range(words)) + "。"
    if language == 1:
        return "".join(rng.choice(_ZH) + rng.choice(_ZH_GLUE) for _ in range(words)) + "。"
    pieces = [rng.choice(_KO) + rng.choice(_KO_GLUE) for _ in range(words)]
    return " ".join([*pieces, rng.choice(_KO_VERBS)]) + "."


def cjk_events(rng: random.Random, count: int) -> list[Event]:
    return [
        SessionEvent(role=("user", "model")[n % 2], parts=[TextPart(text=cjk_sentence(rng))])
        for n in range(count)
    ]


def write_v7(path: Path, sessions: Iterable[list[Event]]) -> int:
    """A version-7 file holding ``sessions``, indexed as version 7 indexed; rows written."""
    rows = 0
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for step in schema.MIGRATIONS[:7]:
            step(conn)
        conn.execute("PRAGMA user_version = 7")
        conn.execute("BEGIN")
        for number, events in enumerate(sessions, start=1):
            when = float(number * PER_SESSION)
            conn.execute(
                "INSERT INTO sessions(id, title, created_at, updated_at, message_count) "
                "VALUES (?, ?, ?, ?, ?)",
                (number, f"session {number}", when, when + len(events), len(events)),
            )
            for offset, event in enumerate(events):
                (message_id,) = conn.execute(
                    "INSERT INTO messages(session_id, kind, event_json, created_at) "
                    "VALUES (?, ?, ?, ?) RETURNING id",
                    (number, event.event_type, event.model_dump_json(), when + offset),
                ).fetchone()
                if text := searchable_text(event):
                    conn.execute(
                        "INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, ?)",
                        (message_id, text, indexed_role(event)),
                    )
                rows += 1
        conn.execute("COMMIT")
    return rows


def cjk_history(sessions: int) -> tuple[list[list[Event]], dict[int, int]]:
    """The CJK sessions, and fact index -> its message id (ids are written in order)."""
    rng = random.Random(26)
    history: list[list[Event]] = []
    planted: dict[int, int] = {}
    homes = {fact * sessions // len(FACTS): fact for fact in range(len(FACTS))}
    assert len(homes) == len(FACTS), "one session per fact"
    for number in range(sessions):
        events = cjk_events(rng, PER_SESSION)
        if (fact := homes.get(number)) is not None:
            slot = rng.randrange(PER_SESSION)
            events[slot] = SessionEvent(role="user", parts=[TextPart(text=FACTS[fact][0])])
            planted[fact] = number * PER_SESSION + slot + 1
        history.append(events)
    return history, planted


def english_history(sessions: int) -> list[list[Event]]:
    rng = random.Random(8)
    return [session_events(rng, PER_SESSION) for _ in range(sessions)]


async def opened_seconds(path: Path) -> float:
    started = time.perf_counter()
    async with SessionManager(path):
        pass
    return time.perf_counter() - started


def file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def table_bytes(path: Path, prefix: str) -> int:
    """Bytes of the pages of ``prefix``'s tables (an FTS5 table and its shadow tables)."""
    with closing(sqlite3.connect(path)) as conn:
        sql = "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ? || '%'"
        return int(conn.execute(sql, (prefix,)).fetchone()[0])


def mb(count: int) -> str:
    return f"{count / 1e6:6.1f} MB"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:6.1f} ms"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def migrate(name: str, path: Path) -> None:
    before, index_before = file_bytes(path), table_bytes(path, "messages_fts")
    first = await opened_seconds(path)
    again = await opened_seconds(path)
    after, index_after = file_bytes(path), table_bytes(path, "messages_fts")
    print(
        f"  {name:<8} migrate+open {first:5.2f} s (open when migrated {again:4.2f} s) | "
        f"file {mb(before)} -> {mb(after)} | index {mb(index_before)} -> {mb(index_after)}"
    )


async def cjk_search(path: Path, planted: dict[int, int]) -> None:
    found: dict[str, list[bool]] = {"1": [], "2": [], "3+": []}
    times: dict[tuple[str, str], list[float]] = {}
    async with SessionManager(path) as store:
        await store.new_session()
        for fact, (_, word) in enumerate(FACTS):
            page = await store.search_history(word, limit=5)
            size = str(len(word)) if len(word) < 3 else "3+"
            found[size].append(planted[fact] in [hit.message_id for hit in page.hits])
        for _ in range(ROUNDS):
            for words, kind in (([word for _, word in FACTS], "fact words"), (COMMON, "common")):
                for word in words:
                    started = time.perf_counter()
                    await store.search_history(word)
                    times.setdefault(("search_history", kind), []).append(
                        time.perf_counter() - started
                    )
                    started = time.perf_counter()
                    await store.search_page(word, 100)
                    times.setdefault(("screen search", kind), []).append(
                        time.perf_counter() - started
                    )
    for size, hits in found.items():
        print(f"  a {size:>2}-character word finds its fact in the top 5: {sum(hits)}/{len(hits)}")
    for (name, kind), runs in times.items():
        p50, p95 = statistics.median(runs), percentile(runs, 0.95)
        print(f"  {name:<15} {kind:<11} p50 {ms(p50)}  p95 {ms(p95)}")


def trigram_beside(path: Path, planted: dict[int, int]) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        started = time.perf_counter()
        conn.execute("CREATE VIRTUAL TABLE trigram USING fts5(text, tokenize = 'trigram')")
        conn.execute(
            "INSERT INTO trigram(rowid, text) "
            "SELECT rowid, replace(text, char(8203), '') FROM messages_fts"
        )
        built = time.perf_counter() - started
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        matched = liked = 0
        for fact, (_, word) in enumerate(FACTS):
            sql = "SELECT rowid FROM trigram WHERE trigram MATCH ?"
            matched += (planted[fact],) in conn.execute(sql, (f'"{word}"',)).fetchall()
            sql = "SELECT rowid FROM trigram WHERE text LIKE ?"
            liked += (planted[fact],) in conn.execute(sql, (f"%{word}%",)).fetchall()
    print(
        f"  trigram index: built in {built:5.2f} s, {mb(table_bytes(path, 'trigram')).strip()};"
        f" facts found by MATCH {matched}/{len(FACTS)}, by LIKE {liked}/{len(FACTS)}"
    )


async def main(quick: bool) -> None:
    began = time.perf_counter()
    sessions = 20 if quick else 1_000
    print(f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
    with tempfile.TemporaryDirectory(prefix="koroku-forms-") as folder:
        english, cjk = Path(folder) / "english.db", Path(folder) / "cjk.db"
        rows = write_v7(english, english_history(sessions))
        history, planted = cjk_history(sessions)
        write_v7(cjk, history)
        print(f"\nMigration 10 at {rows:,} messages (version 7 -> {schema.SCHEMA_VERSION}):")
        await migrate("English", english)
        await migrate("CJK", cjk)
        print(f"\nChinese, Japanese and Korean at {rows:,} messages ({len(FACTS)} facts):")
        await cjk_search(cjk, planted)
        print("\nThe alternative, on a copy of the same file:")
        copy = Path(folder) / "trigram.db"
        shutil.copy(cjk, copy)
        trigram_beside(copy, planted)
    print(f"\nTotal bench time {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run (seconds)")
    asyncio.run(main(parser.parse_args().quick))
