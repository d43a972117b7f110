"""The 55 facts ``recall_bench.py`` plants whose questions share no content word with them.

A fact is ``(where, text, question)`` as in ``recall_facts.py``. Here the
question says the same thing in other words (synonyms, a category for a
name, another phrasing): "when does my travel document run out?" for "my
passport expires on 9 March". Full-text search cannot bridge that, stems or
not: ``tests/test_recall_bench_sets.py`` checks that no question's
searchable words (what ``build_match_query`` keeps) match its fact.
"""

from __future__ import annotations

MEANING_FACTS: list[tuple[str, str, str]] = [
    ("user", "My passport expires on 9 March.", "when does my travel document run out?"),
    (
        "user",
        "The bike's derailleur needs a new cable, 35 euros.",
        "what does fixing the bicycle cost?",
    ),
    ("user", "I'm allergic to penicillin.", "which medicine must I avoid?"),
    (
        "model",
        "Your dentist appointment moved to Thursday at 15:00.",
        "when do I see the tooth doctor now?",
    ),
    ("user", "We adopted a rescue greyhound named Biscuit.", "what is our new dog called?"),
    (
        "summary",
        "The user switched the home router to a mesh Wi-Fi system from Eero.",
        "which wireless networking gear did I pick for the house?",
    ),
    (
        "result",
        "Flight LH 1234 departs Frankfurt 07:40, gate B12",
        "what time does my plane leave?",
    ),
    ("user", "My sister Ana lives in Lisbon.", "which city is my sibling based in?"),
    (
        "model",
        "Postgres autovacuum stalled because of a long-running transaction.",
        "why did the database cleanup hang?",
    ),
    ("user", "I can't eat gluten; coeliac since 2019.", "what food restriction do I have?"),
    (
        "user",
        "The car's MOT inspection is due in October.",
        "when must the vehicle get its roadworthiness check?",
    ),
    ("user", "Our wedding anniversary is June 21st.", "what date did my spouse and I marry?"),
    (
        "model",
        "Rent goes up to 1,450 a month from April.",
        "how much will the lodging payment be after the raise?",
    ),
    ("user", "My blood type is O negative.", "which transfusion group am I?"),
    (
        "user",
        "The kids' school starts again on 2 September.",
        "when do the children go back to class?",
    ),
    ("user", "I take 50 mg of sertraline every morning.", "what antidepressant dose am I on?"),
    (
        "result",
        "Disk /dev/sda2 is 97% full; /var/log uses 41 GB.",
        "why is the drive running out of space?",
    ),
    (
        "user",
        "The Wi-Fi password for the cabin is pinecone-42.",
        "what's the wireless key at our holiday hut?",
    ),
    (
        "model",
        "Your gym membership renews automatically on the 1st.",
        "when does the fitness club subscription charge again?",
    ),
    ("user", "My mother's birthday is 3 November.", "when was mum born?"),
    (
        "user",
        "Bought a used Yamaha upright piano for 2,300.",
        "how much did that musical instrument cost?",
    ),
    (
        "summary",
        "We chose Hetzner in Falkenstein for hosting the staging servers.",
        "which provider runs our test machines?",
    ),
    (
        "user",
        "I'm learning Japanese on Tuesdays with a tutor called Kenji.",
        "who teaches me that Asian language?",
    ),
    (
        "user",
        "The boiler was serviced last week; the engineer found a leaking valve.",
        "what did the heating technician discover?",
    ),
    (
        "model",
        "Your tax return is due by 31 January.",
        "what's the deadline to file with the revenue office?",
    ),
    ("user", "We're vegetarian at home, no meat at all.", "what diet does our household follow?"),
    ("user", "My shoe size is 44 EU.", "how big are my feet for buying sneakers?"),
    (
        "user",
        "Insurance for the flat is with Allianz, policy 7781-22.",
        "who covers our apartment against damage?",
    ),
    (
        "result",
        "Build failed: OutOfMemoryError in the Gradle daemon",
        "why did the compile crash?",
    ),
    (
        "user",
        "The neighbour's cat, Mochi, visits every evening.",
        "which pet from next door comes by at night?",
    ),
    ("user", "I ran my first half marathon in 1:52.", "how fast was my 21 km race?"),
    (
        "model",
        "Sourdough: feed the starter equal flour and water every 12 hours.",
        "how do I look after the bread yeast culture?",
    ),
    (
        "user",
        "Our landlord is Mr. Okafor, phone 0612 345 678.",
        "how do I reach the owner of the place we lease?",
    ),
    (
        "summary",
        "The user decided to sell the old Volvo and buy an e-bike.",
        "what happened to the automobile?",
    ),
    (
        "user",
        "My glasses prescription is -2.25 left, -2.00 right.",
        "what's the strength of my spectacles?",
    ),
    (
        "user",
        "Grandpa's hearing aid batteries are type 312.",
        "which cells does granddad's ear device take?",
    ),
    ("user", "The babysitter charges 12 an hour.", "what's the childminder's rate?"),
    ("user", "I'm flying to Osaka on 4 May for a conference.", "when is my trip to Japan?"),
    (
        "model",
        "Water the orchids once a week with lukewarm water.",
        "how often do those flowers need a drink?",
    ),
    ("user", "Our daughter is allergic to peanuts.", "what nut must the girl stay away from?"),
    (
        "user",
        "The electricity bill was 186 euros this quarter.",
        "how much did power cost recently?",
    ),
    ("user", "My laptop is a ThinkPad X1 Carbon from 2021.", "which notebook computer do I own?"),
    ("call", "kubectl rollout undo deployment/api", "how did we revert the backend release?"),
    ("user", "I'm afraid of heights, no rooftop bars please.", "which phobia do I have?"),
    ("user", "My salary now goes to my new ING account.", "where is my paycheck deposited?"),
    (
        "user",
        "The plumber is coming Friday morning to fix the shower.",
        "when will the tradesman repair the bathroom?",
    ),
    ("user", "Our cat Luna needs her vaccination booster in August.", "when is the kitty's jab?"),
    (
        "model",
        "Your library books are due back on the 18th.",
        "when must I return the borrowed novels?",
    ),
    ("user", "I prefer aisle seats on long flights.", "where do I like to sit on a plane?"),
    (
        "user",
        "My partner works night shifts at the hospital.",
        "when is my spouse on duty at the clinic?",
    ),
    (
        "summary",
        "The team agreed to freeze features two weeks before each release.",
        "when do we stop adding functionality ahead of shipping?",
    ),
    ("user", "Recycling is collected every second Tuesday.", "how often do they pick up the bins?"),
    ("user", "Lost my wallet on the tram; cards cancelled.", "what happened to my purse?"),
    (
        "user",
        "My grandmother makes pierogi every Christmas Eve.",
        "what does granny cook for the holidays?",
    ),
    (
        "result",
        "HTTP 429 from api.stripe.com: rate limited, retry after 30s",
        "why were payment requests refused?",
    ),
]
