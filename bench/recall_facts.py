"""The 50 facts ``recall_bench.py`` plants, each with a question asked the way a person would.

A fact is ``(where, text, question)``. ``where`` is the kind of row it lives
in: ``user`` / ``model`` text, a tool ``call``'s arguments, a tool
``result``, or a compaction ``summary``. Questions never copy the fact:
other word forms (decided / decision, migrating / migration), parts of a
phrase, words in another order, filler words ("what did we...").
"""

from __future__ import annotations

FACTS: list[tuple[str, str, str]] = [
    (
        "user",
        "We decided the nightly backup runs at 02:30 with restic to the NAS.",
        "what did we decide about the nightly backup",
    ),
    (
        "model",
        "The compaction threshold is now 80 percent of the context window.",
        "when does compacting start, which threshold",
    ),
    (
        "summary",
        "The user migrated the wiki from MediaWiki to Postgres-backed Outline.",
        "migration of the wiki to outline",
    ),
    (
        "result",
        "certbot renewed the certificate for mail.example.org, expires 2025-09-14",
        "when does the mail certificate expire",
    ),
    ("call", "git bisect start v2.3.0 v2.1.0 -- src/parser", "bisecting the parser regression"),
    (
        "user",
        "My daughter's piano recital is on the 14th at the community hall.",
        "piano recital date",
    ),
    (
        "model",
        "Use exponential backoff with jitter, capped at 32 seconds, for the uploader retries.",
        "retry policy of the uploader, backoff cap",
    ),
    (
        "summary",
        "Agreed to rename the project from Hoshi to Koroku before the public release.",
        "what was the project called before Koroku",
    ),
    (
        "result",
        "pytest: 1843 passed, 2 xfailed in 312.4s on the arm64 runner",
        "how long did the test suite take on arm64",
    ),
    (
        "user",
        "The landlord said the boiler inspection is scheduled for early March.",
        "boiler inspected when",
    ),
    (
        "model",
        "Switching the cache from Redis to an in-process LRU cut p99 latency by 40 ms.",
        "latency after replacing redis with lru cache",
    ),
    ("call", "sqlite3 koroku.db 'PRAGMA wal_checkpoint(TRUNCATE)'", "did we checkpoint the WAL"),
    (
        "summary",
        "The user prefers tabs over spaces in Makefiles only; spaces everywhere else.",
        "tabs or spaces preference",
    ),
    (
        "user",
        "Grandma's lasagna recipe uses nutmeg in the béchamel, never oregano.",
        "what spice goes in grandma's lasagna bechamel",
    ),
    (
        "result",
        "terraform plan: 3 to add, 1 to change, 0 to destroy (vpc-peering-eu)",
        "terraform changes for the eu vpc peering",
    ),
    (
        "model",
        "Rotate the API keys every 90 days; the vault policy enforces it.",
        "how often are api keys rotated",
    ),
    (
        "user",
        "We're flying to Lisbon on the 3rd and renting a car to drive to Porto.",
        "trip to porto, rental car",
    ),
    (
        "summary",
        "Debugged a memory leak in the websocket handler caused by unbounded listener lists.",
        "leaking memory websockets cause",
    ),
    (
        "call",
        "ffmpeg -i lecture.mkv -vf scale=1280:-2 -crf 26 lecture-720p.mp4",
        "converting the lecture video to 720p",
    ),
    ("result", "du -sh /var/lib/docker: 187G", "how much disk does docker use"),
    (
        "user",
        "The dentist moved my appointment to Thursday at 4pm.",
        "when is the dentist appointment",
    ),
    (
        "model",
        "The flaky test fails because the fixture shares a temp directory across workers.",
        "why was that test flaky",
    ),
    (
        "summary",
        "Chose SQLite FTS5 with the porter tokenizer for full-text search over Tantivy.",
        "which search engine did we pick, tantivy or fts5",
    ),
    (
        "user",
        "Our wifi password changed to the name of the cat followed by the year.",
        "new wifi password hint",
    ),
    (
        "result",
        "nmap: 22/tcp open ssh, 443/tcp open https, 5432/tcp filtered postgresql",
        "which ports were open on the scan",
    ),
    (
        "model",
        "Invoice numbering restarts each fiscal year, prefixed with the year: 2024-0001.",
        "invoice number format",
    ),
    (
        "call",
        "kubectl rollout undo deployment/checkout --to-revision=41",
        "rolling back the checkout deployment",
    ),
    (
        "summary",
        "Planned the garden: tomatoes along the south fence, herbs in the raised bed.",
        "where do the tomatoes go in the garden plan",
    ),
    ("user", "Please remember my passport expires in November next year.", "passport expiry"),
    (
        "result",
        "curl: (60) SSL certificate problem: unable to get local issuer certificate",
        "ssl error with curl issuer",
    ),
    (
        "model",
        "Marathon training: long runs on Sundays, building from 14 km to 32 km by week 16.",
        "sunday long run plan for the marathon",
    ),
    (
        "user",
        "The quarterly board meeting was moved to the Kyoto office.",
        "where is the board meeting this quarter",
    ),
    (
        "summary",
        "Translated the onboarding guide into Japanese and Portuguese.",
        "which languages was the onboarding guide translated to",
    ),
    ("call", "rsync -av --delete photos/ nas:/volume1/photos/", "syncing photos to the nas"),
    ("result", "ping vpn.office.lan: 100% packet loss", "vpn unreachable packet loss"),
    (
        "model",
        "Set the thermostat schedule to 19 degrees at night and 21 in the morning.",
        "thermostat temperatures at night",
    ),
    (
        "user",
        "I sold the old bicycle for 120 euros to a neighbour.",
        "how much did the bike sell for",
    ),
    (
        "summary",
        "Reviewed the lease: notice period is three months, deposit returned within 30 days.",
        "notice period in the lease",
    ),
    (
        "result",
        "pip-audit: found 2 known vulnerabilities in 1 package (jinja2 3.1.2)",
        "vulnerable package audit jinja",
    ),
    (
        "call",
        "openssl req -new -key server.key -out server.csr -subj '/CN=intranet.local'",
        "certificate signing request for the intranet",
    ),
    (
        "model",
        "Sourdough: feed the starter twice a day, 1:5:5 ratio, keep it at 24 degrees.",
        "feeding ratio for the sourdough starter",
    ),
    (
        "user",
        "The car's next service is due at 60,000 km, including the timing belt.",
        "timing belt service mileage",
    ),
    (
        "summary",
        "Set up a Raspberry Pi as a Pi-hole DNS blocker on the home network.",
        "dns ad blocking raspberry",
    ),
    (
        "result",
        "git log: a41c9e2 Fix race in lease renewal (Mika, 3 days ago)",
        "who fixed the lease renewal race",
    ),
    (
        "model",
        "Split the monolith's billing module first, since it has the fewest inbound calls.",
        "which module to split from the monolith first",
    ),
    (
        "user",
        "My blood pressure reading this morning was 128 over 82.",
        "blood pressure this morning",
    ),
    (
        "call",
        "docker compose -f grafana.yml up -d --force-recreate",
        "recreating grafana containers",
    ),
    (
        "summary",
        "Estimated the kitchen renovation at 14,000 euros, cabinets being the largest cost.",
        "kitchen renovation estimate",
    ),
    (
        "result",
        "smartctl: Reallocated_Sector_Ct 0, Power_On_Hours 31877, SMART overall PASSED",
        "is the disk healthy, smart result",
    ),
    (
        "user",
        "The cat needs her vaccination booster before the holiday kennel stay in July.",
        "cat vaccine before the kennel",
    ),
]
