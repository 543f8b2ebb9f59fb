"""POST /log/batch over HTTP (docs/reference/decisions.md): the same effects as the same POST /log calls
one by one, per-item results in input order, malformed batches store nothing, NDJSON, events,
and a batch racing single POST /log calls of the same customer."""

import datetime as dt
import json
import math
import threading

import pytest
from django.db import connections

from audit.models import AuditEntry, Decision
from tests.audit.factories import all_entries, decision_body, recompute_hash
from tests.conftest import client_for, make_key
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def day(n: int) -> str:
    d = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=n)
    return dt.datetime.combine(d, dt.time(10), tzinfo=dt.UTC).isoformat().replace("+00:00", "Z")


def history() -> list[dict]:
    """A mixed sequence: several users, models, days, confidences, subgroups, outcomes,
    late outcomes (also for a decision of the same batch), a replay and a conflict."""
    items: list[dict] = []
    for i in range(60):
        body = decision_body(
            decision_id=f"h-{i}",
            user_id=f"user-{i % 4}",
            model_id=["credit-v1", "credit-v2", None][i % 3],
            ai_recommendation=["approve", "deny"][i % 2],
            user_decision=["approve", "deny", "Approve "][i % 3],
            ai_confidence=[0.1, 0.45, 0.55, 0.85, 0.95, None][i % 6],
            subgroups={"gender": ["f", "m"][i % 2], "age_group": ["18-30", "31-50", "51+"][i % 3]},
            timestamp=day(i % 5),
        )
        if i % 7 == 0:
            body["outcome"] = ["approve", "deny"][i % 2 == 0]
        if body["model_id"] is None:
            del body["model_id"]
        if body["ai_confidence"] is None:
            del body["ai_confidence"]
        items.append(body)
    items.append({"decision_id": "h-3", "outcome": "deny"})
    items.append({"decision_id": "h-4", "outcome": "approve"})
    items.append({"decision_id": "h-4", "outcome": "deny"})
    items.append(dict(items[10]))  # replay
    items.append({**items[11], "context": "changed"})  # conflict
    items.append({"decision_id": "h-5", "outcome": "approve"})
    items.append({"decision_id": "h-5", "outcome": "approve"})  # outcome replay
    return items


def post_batch(api, items):
    r = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert r.status_code == 200, r.content
    return r.json()


def _without(value, keys=("computed_at", "generated_at")):
    if isinstance(value, dict):
        return {k: _without(v) for k, v in value.items() if k not in keys}
    if isinstance(value, list | tuple):
        return [_without(v) for v in value]
    return value


def same_to_rounding(a, b) -> bool:
    """Equal, floats to 12 significant digits: a whole ISO week is read from its weekly row, whose
    float sums a batch adds day by day and single calls decision by decision (docs/architecture.md,
    Calibration aggregates), so a figure may differ in its last digits; every other value is equal."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_to_rounding(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_to_rounding(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def figures(api):
    users = {}
    for u in range(4):
        r = api.post("/v1/trust-score", {"user_id": f"user-{u}"}, format="json")
        assert r.status_code == 200, r.content
        users[u] = r.json()
    calibrate = api.post("/v1/trust-score", {}, format="json").json()
    subgroups = api.get("/v1/bias/subgroups").json()
    entries = all_entries(api)
    # an entry's own ids, times and links, and its random salt and what the salt changes
    strip = ("entry_id", "logged_at", "hash", "previous_hash", "decision_id", "salt", "personal", "canonical")
    trail = [{k: v for k, v in e.items() if k not in strip} for e in entries]
    return _without((users, calibrate, subgroups["attributes"], trail))


def test_a_batch_and_the_same_calls_one_by_one_give_identical_figures_and_chains(api, applier):
    items = history()
    batch = post_batch(api, items)
    one_by_one = client_for(make_key("globex", "enterprise").value)
    statuses = []
    categories = []
    for item in items:
        r = one_by_one.post("/v1/log", item, format="json")
        statuses.append(r.status_code)
        categories.append(r.json().get("calibration_category"))
    assert [row["status"] for row in batch["results"]] == statuses
    assert [row.get("calibration_category") for row in batch["results"]] == categories
    assert [row["index"] for row in batch["results"]] == list(range(len(items)))
    assert batch["accepted"] == statuses.count(201)
    assert batch["replayed"] == statuses.count(200)
    assert batch["rejected"] == len(items) - statuses.count(201) - statuses.count(200)
    assert same_to_rounding(figures(api), figures(one_by_one))
    for client in (api, one_by_one):
        verify = client.get("/v1/audit-trail/verify").json()
        assert verify["valid"] is True, verify
        assert verify["entries_checked"] == statuses.count(201)
    entries = all_entries(api)
    assert [e["sequence"] for e in entries] == list(range(1, len(entries) + 1))
    assert all(recompute_hash(e) == e["hash"] for e in entries)
    stored = [row for row in batch["results"] if row["status"] == 201]
    assert [row["sequence"] for row in stored] == list(range(1, len(stored) + 1))


def test_a_mixed_batch_reports_each_item_and_stores_only_the_valid_ones(api, applier):
    assert api.post("/v1/log", decision_body(decision_id="old"), format="json").status_code == 201
    items = [
        decision_body(decision_id="new-1"),
        decision_body(decision_id="bad", ai_confidence=2),
        decision_body(decision_id="old"),  # replay of a stored decision
        decision_body(decision_id="old", user_decision="deny"),  # conflict
        {"decision_id": "old", "outcome": "deny"},  # outcome update
        {"decision_id": "ghost", "outcome": "deny"},  # unknown id
        {"user_id": "alice"},  # invalid, no decision_id
        decision_body(decision_id="new-1"),  # replay of an earlier item
    ]
    body = post_batch(api, items)
    assert (body["accepted"], body["replayed"], body["rejected"]) == (2, 2, 4)
    rows = body["results"]
    assert [r["status"] for r in rows] == [201, 400, 200, 409, 201, 404, 400, 200]
    assert rows[1]["error"]["code"] == "VALIDATION_ERROR"
    assert "ai_confidence" in {e["field"] for e in rows[1]["error"]["errors"]}
    assert rows[1]["decision_id"] == "bad"
    assert rows[2]["sequence"] == 1 and rows[2]["entry_id"]
    assert rows[3]["error"]["code"] == "DECISION_CONFLICT"
    assert rows[5]["error"]["code"] == "NOT_FOUND"
    assert rows[6]["decision_id"] is None
    assert rows[7]["entry_id"] == rows[0]["entry_id"]
    assert rows[0]["sequence"] == 2 and rows[4]["sequence"] == 3
    assert set(Decision.objects.filter(customer_id="acme").values_list("decision_id", flat=True)) == {
        "old",
        "new-1",
    }
    assert Decision.objects.get(customer_id="acme", decision_id="old").outcome == "deny"
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


@pytest.mark.parametrize(
    "body",
    [
        [],
        {},
        {"decisions": []},
        {"decisions": "x"},
        {"decisions": [decision_body(), 3]},
        {"decisions": [decision_body()] * 1001},
    ],
)
def test_malformed_batches_are_refused_whole_and_store_nothing(api, body):
    r = api.post("/v1/log/batch", body, format="json")
    assert r.status_code == 400, r.content
    assert r.json()["code"] == "VALIDATION_ERROR"
    assert not AuditEntry.objects.exists()


def test_a_fault_far_into_the_body_is_named_where_it_is(api):
    """The body is read a chunk at a time: a fault many chunks in is named by its line, column
    and character in the whole body, as json names it."""
    items = [json.dumps(decision_body()) for _ in range(300)]
    items[250] = '{"decision_id": tru}'
    body = '{"decisions": [\n' + ",\n".join(items) + "]}"
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(body)
    r = api.post("/v1/log/batch", body.encode(), content_type="application/json")
    assert r.status_code == 400 and r.json()["code"] == "INVALID_JSON"
    assert str(expected.value) in r.json()["detail"]
    assert not AuditEntry.objects.exists()


def test_invalid_json_and_oversized_bodies(api):
    r = api.post("/v1/log/batch", b'{"decisions": [', content_type="application/json")
    assert r.status_code == 400 and r.json()["code"] == "INVALID_JSON"
    r = api.post("/v1/log/batch", b'{"user_id": "a"}\n{nope\n', content_type="application/x-ndjson")
    assert r.status_code == 400 and r.json()["code"] == "INVALID_JSON"
    big = {"decisions": [decision_body(context="x" * 9000) for _ in range(1000)]}
    r = api.post("/v1/log/batch", big, format="json")
    assert r.status_code == 413 and r.json()["code"] == "PAYLOAD_TOO_LARGE"
    assert not AuditEntry.objects.exists()
    # between 1 MiB and 8 MiB is fine on this endpoint
    medium = {"decisions": [decision_body(context="x" * 2000) for _ in range(1000)]}
    assert len(json.dumps(medium)) > 1024 * 1024
    body = post_batch(api, medium["decisions"])
    assert body["accepted"] == 1000


def test_ndjson_is_accepted_with_the_same_answer(api):
    items = [decision_body(decision_id=f"n-{i}") for i in range(3)] + [
        {"decision_id": "n-0", "outcome": "deny"}
    ]
    text = "\n".join(json.dumps(i) for i in items) + "\n\n"
    r = api.post("/v1/log/batch", text.encode(), content_type="application/x-ndjson")
    assert r.status_code == 200, r.content
    assert [row["status"] for row in r.json()["results"]] == [201, 201, 201, 201]
    assert api.get("/v1/audit-trail/verify").json()["entries_checked"] == 4


def test_events_fire_as_for_single_calls(api, other_api, applier):
    items = [
        decision_body(decision_id="e-1", ai_confidence=0.2),  # followed at low confidence
        decision_body(decision_id="e-2", user_decision="deny", ai_confidence=0.9),  # overrode high
        decision_body(decision_id="e-3", ai_confidence=...),  # unscored until its outcome
        {"decision_id": "e-3", "outcome": "deny"},  # followed, AI wrong
    ]
    post_batch(api, items)
    for item in items:
        other_api.post("/v1/log", item, format="json")

    def events(customer):
        rows = Event.objects.filter(customer_id=customer).order_by("created_at", "id")
        return sorted(
            (e.type, e.data["decision_id"], e.data["calibration_category"], e.data["source"]) for e in rows
        )

    assert events("acme") == events("globex")
    assert len(events("acme")) == 3


@pytest.mark.django_db(transaction=True)
def test_a_batch_racing_single_calls_leaves_a_gapless_chain_that_verifies(settings):
    settings.RATE_LIMITS_ENABLED = False
    key = make_key("acme", "enterprise")
    barrier = threading.Barrier(3)
    statuses: list[int] = []
    lock = threading.Lock()

    def singles(w: int) -> None:
        client = client_for(key.value)
        barrier.wait()
        try:
            for i in range(40):
                r = client.post("/v1/log", decision_body(decision_id=f"s{w}-{i}"), format="json")
                with lock:
                    statuses.append(r.status_code)
        finally:
            connections.close_all()

    def batches() -> None:
        client = client_for(key.value)
        barrier.wait()
        try:
            for b in range(4):
                items = [decision_body(decision_id=f"b{b}-{i}") for i in range(50)]
                r = client.post("/v1/log/batch", {"decisions": items}, format="json")
                with lock:
                    statuses.append(r.status_code)
                    statuses.extend(row["status"] for row in r.json()["results"])
        finally:
            connections.close_all()

    threads = [threading.Thread(target=singles, args=(w,)) for w in range(2)]
    threads.append(threading.Thread(target=batches))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    total = 2 * 40 + 4 * 50
    assert statuses.count(201) == total, {s: statuses.count(s) for s in set(statuses)}
    sequences = list(
        AuditEntry.objects.filter(customer_id="acme").order_by("sequence").values_list("sequence", flat=True)
    )
    assert sequences == list(range(1, total + 1))
    verify = client_for(key.value).get("/v1/audit-trail/verify").json()
    assert verify["valid"] is True and verify["entries_checked"] == total


def test_a_large_batch_stores_each_timestamp_as_the_instant_sent():
    """A batch of more than 50 decisions is written by COPY, its timestamps as text: every
    offset and millisecond reads back, on the decision and on its entry, as the instant sent."""
    offsets = ["Z", "+05:30", "-08:00", "+14:00", "-00:30"]
    bodies = [
        decision_body(
            decision_id=f"ts-{i}", timestamp=f"2026-11-{1 + i % 20:02d}T23:59:{i:02d}.{i:03d}{offsets[i % 5]}"
        )
        for i in range(60)
    ]
    response = client_for(make_key().value).post("/v1/log/batch", {"decisions": bodies}, format="json")
    assert response.status_code == 200 and response.json()["accepted"] == 60
    decisions = dict(Decision.objects.values_list("decision_id", "timestamp"))
    entries = dict(AuditEntry.objects.values_list("decision_ref", "timestamp"))
    logged = set(AuditEntry.objects.values_list("logged_at", flat=True))
    for body in bodies:
        sent = dt.datetime.fromisoformat(body["timestamp"])
        assert decisions[body["decision_id"]] == sent and entries[body["decision_id"]] == sent
    assert len(logged) == 1 and set(Decision.objects.values_list("logged_at", flat=True)) == logged
