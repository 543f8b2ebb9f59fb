"""Statement budgets of the hot paths (docs/architecture.md, "Statement budgets"): the statements and, on PostgreSQL, the round trips of POST /log, POST /calibrate,
a 1,000-item POST /log/batch and GET /audit-trail/verify after 30 new entries, counted on the
wire (tests/statements.py). A change that adds a statement fails here with the figure and
the budget it exceeded; a change that legitimately needs more raises the budget in the same
commit, with the reason.

The requests commit as in production (a transactional test: the write is not nested in a
test's transaction, so group commit and COMMIT run as they do for a client)."""

import pytest
from django.conf import settings
from django.db import connection

from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key
from tests.statements import Count, assert_within, counted

pytestmark = pytest.mark.django_db(transaction=True)

# (statements, round trips) on PostgreSQL; statements on SQLite. A customer without drift
# monitors: the append reads the chain head's count of them and the write reads no monitor
# (docs/reference/drift.md, Processing in the write; tests/drift/test_statement_budgets.py
# counts a write with monitors).
POSTGRESQL = {
    "log": (10, 4),
    # The event insert and the webhooks read of the fan-out, in the same round trip.
    "log_event": (12, 4),
    "outcome": (10, 6),
    # The profile of POST /calibrate runs the confidence check over the organisation's window
    # (docs/reference/calibration.md, A miscalibrated confidence): one statement more.
    "calibrate": (11, 6),
    # The large-plan applier (audit.apply): the stored decisions' read (one statement, an
    # array of ids), then in one round trip the decisions' insert, per contributor one INSERT
    # ... SELECT of its changes' arrays and the events' insert (none here), then the chain: the
    # head locked, the entries' COPY, the head moved, the tree extended. Each other statement
    # its own round trip (the COPYs two: the rows, then the end).
    "batch": (14, 13),
    "verify": (13, 14),
    # Three entries: each one's append and tree statement in the write's one round trip (14 in
    # 11 when the head row was locked, the entries linked in Python and the tree read apart).
    "few": (15, 6),
}
SQLITE = {"log": 12, "log_event": 14, "outcome": 12, "calibrate": 13, "batch": 27, "verify": 10, "few": 13}


def budget(name: str) -> dict[str, int]:
    """The figures above include the API key's SELECT (one statement, one round trip). With
    Redis a process that has the key cached does not send it (keys/keycache.py): one less."""
    cached = 1 if settings.REDIS_URL else 0
    if connection.vendor == "postgresql":
        statements, round_trips = POSTGRESQL[name]
        return {"statements": statements - cached, "round_trips": round_trips - cached}
    return {"statements": SQLITE[name] - cached}


@pytest.fixture
def api(settings):
    settings.RATE_LIMITS_ENABLED = True
    return client_for(make_key().value)


def _worst(counts: list[Count]) -> Count:
    return max(counts, key=lambda c: (c.statements, c.round_trips))


def test_post_log_stays_within_its_statement_budget(api):
    api.post("/v1/log", decision_body(), format="json")  # the customer's chain head exists
    counts = []
    for n in range(4):  # both parities of the Merkle tree's right edge
        body = decision_body(subgroups={"gender": ("female", "male")[n % 2], "age_group": "25-34"})
        with counted() as count:
            assert api.post("/v1/log", body, format="json").status_code == 201
        counts.append(count)
    assert_within("POST /log", _worst(counts), **budget("log"))


def test_post_log_that_fires_an_event_stays_within_its_statement_budget(api):
    from webhooks.models import Event

    api.post("/v1/log", decision_body(), format="json")
    counts = []
    for n in range(4):  # overriding a confident recommendation: trust.miscalibrated
        body = decision_body(ai_confidence=0.95, user_decision="deny", subgroups={"gender": "fm"[n % 2]})
        stored = Event.objects.count()
        with counted() as count:
            assert api.post("/v1/log", body, format="json").status_code == 201
        assert Event.objects.count() == stored + 1
        counts.append(count)
    assert_within("POST /log firing an event", _worst(counts), **budget("log_event"))


def test_a_late_outcome_stays_within_its_statement_budget(api):
    ids = [decision_body()["decision_id"] for _ in range(4)]
    for decision_id in ids:
        api.post("/v1/log", decision_body(decision_id=decision_id), format="json")
    counts = []
    for decision_id in ids:
        with counted() as count:
            r = api.post("/v1/log", {"decision_id": decision_id, "outcome": "approve"}, format="json")
            assert r.status_code == 201, r.content
        counts.append(count)
    assert_within("POST /log (a late outcome)", _worst(counts), **budget("outcome"))


def test_post_calibrate_stays_within_its_statement_budget(api):
    api.post("/v1/calibrate", decision_body(), format="json")
    counts = []
    for _ in range(4):
        with counted() as count:
            assert api.post("/v1/calibrate", decision_body(), format="json").status_code == 200
        counts.append(count)
    assert_within("POST /calibrate", _worst(counts), **budget("calibrate"))


def test_a_thousand_item_batch_stays_within_its_statement_budget(api):
    # A batch's statements are prepared on their first use on a connection (outside pipeline
    # mode, one round trip more each, once); the budget is of a batch on a connection in use.
    warm = [decision_body(subgroups={"gender": "female"}) for _ in range(60)]
    api.post("/v1/log/batch", {"decisions": warm}, format="json")
    items = [
        decision_body(user_id=f"user-{n % 40}", subgroups={"gender": ("female", "male")[n % 2]})
        for n in range(1000)
    ]
    with counted() as count:
        r = api.post("/v1/log/batch", {"decisions": items}, format="json")
        assert r.status_code == 200 and r.json()["accepted"] == 1000, r.content
    assert_within("POST /log/batch of 1,000 new decisions", count, **budget("batch"))


def test_a_plan_of_a_few_decisions_stays_within_its_statement_budget(api):
    # What a group of concurrent single requests writes (audit.group), as a 3-item batch.
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(3)]}, format="json")
    counts = []
    for n in range(2):  # both parities of the Merkle tree's right edge
        items = [decision_body(subgroups={"gender": ("female", "male")[n % 2]}) for _ in range(3)]
        with counted() as count:
            r = api.post("/v1/log/batch", {"decisions": items}, format="json")
            assert r.status_code == 200 and r.json()["accepted"] == 3, r.content
        counts.append(count)
    assert_within("POST /log/batch of 3 new decisions", _worst(counts), **budget("few"))


def test_verify_after_thirty_new_entries_stays_within_its_statement_budget(api):
    for _ in range(5):
        api.post("/v1/log", decision_body(), format="json")
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True  # the checked-through point
    api.post("/v1/log/batch", {"decisions": [decision_body() for _ in range(30)]}, format="json")
    with counted() as count:
        r = api.get("/v1/audit-trail/verify")
        assert r.json()["valid"] is True and r.json()["entries_checked"] == 35, r.content
    assert_within("GET /audit-trail/verify after 30 new entries", count, **budget("verify"))


def test_the_counter_sees_every_statement_and_wait(transactional_db):
    """The budgets' own instrument: statements sent in one pipeline are several statements
    but one wait; each simple query is one of each."""
    with counted() as single, connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.execute("SELECT 2")
    assert single.statements == 2
    if connection.vendor != "postgresql":
        return
    assert single.round_trips == 2
    with counted() as piped, connection.connection.pipeline(), connection.connection.cursor() as cursor:
        for n in range(3):
            cursor.execute("SELECT %s::int", [n])
    assert piped.statements == 3 and piped.round_trips == 1
    with pytest.raises(AssertionError, match="3 statements, over its budget of 2"):
        assert_within("three selects", piped, statements=2)


@pytest.mark.postgres
def test_the_hot_statements_are_prepared_once_per_connection(api):
    """The decision insert, the upserts and the bias lock and read are prepared statements
    (config.db.prepared): a second request sends only their names."""
    api.post("/v1/log", decision_body(subgroups={"gender": "female"}), format="json")
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [row[0] for row in cursor.fetchall()]
    for table in (
        "audit_decision",
        "calibration_userdailyaggregate",
        "bias_subgroupdailystat",
    ):
        assert any(table in text for text in prepared), (table, prepared)
    with counted() as again:
        api.post("/v1/log", decision_body(subgroups={"gender": "male"}), format="json")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE NOT from_sql")
        assert cursor.fetchone()[0] == len(prepared)  # nothing prepared twice
    assert not any("INSERT INTO" in text and "calibration_userdailyaggregate" in text for text in again.texts)
