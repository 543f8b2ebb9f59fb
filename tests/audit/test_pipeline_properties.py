"""Property: whatever the interleaving, concurrent single calls, batches, outcome updates and
/calibrate calls of one customer leave exactly the state that the same writes one by one, in
the order they were committed (the chain's order), leave in another customer: the same
entries, decisions, per-user aggregates, subgroup statistics and events, and chains that
verify (docs/reference/decisions.md, Order of effects, Group commit, Batches).

Each thread owns its decision ids, so every answer is known in advance whatever the
interleaving; threads start together (a barrier) and post through the real view stack, so
concurrent single calls form groups on their own."""

import datetime as dt
import threading
from itertools import count
from typing import Any

import pytest
from django.db import connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.models import AuditEntry, Decision
from bias.models import SubgroupDailyStat
from calibration.models import UserDailyAggregate
from tests.conftest import client_for, make_key
from webhooks.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

_run = count(1)
_DAY = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)

decision_fields = st.fixed_dictionaries(
    {
        "user_id": st.sampled_from(["u1", "u2"]),
        "ai_recommendation": st.sampled_from(["approve", "deny"]),
        "user_decision": st.sampled_from(["approve", "deny", " Approve"]),
        "ai_confidence": st.sampled_from([None, 0.3, 0.9]),
        "model_id": st.sampled_from([None, "m1"]),
        "outcome": st.sampled_from([None, None, "approve", "deny"]),
        "subgroups": st.sampled_from([None, {"gender": "f"}, {"gender": "m", "age_group": "18-30"}]),
        "day": st.integers(0, 2),
    }
)
op = st.tuples(
    st.sampled_from(["log", "calibrate", "replay", "conflict", "outcome", "batch"]), decision_fields
)
thread_ops = st.lists(op, min_size=2, max_size=6)


class Model:
    """One thread's writes: the bodies it sends and the status each must answer."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.bodies: dict[str, dict[str, Any]] = {}  # decision_id -> the body that logged it
        self.outcome_entries: dict[str, str | None] = {}  # decision_id -> latest outcome entry's outcome
        self.outcome: dict[str, str | None] = {}
        self.n = 0

    def new_body(self, fields: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        body = {
            "decision_id": f"{self.prefix}-{self.n}",
            "user_id": fields["user_id"],
            "ai_recommendation": fields["ai_recommendation"],
            "user_decision": fields["user_decision"],
            "timestamp": (_DAY - dt.timedelta(days=fields["day"])).isoformat(),
        }
        for name in ("ai_confidence", "model_id", "outcome", "subgroups"):
            if fields[name] is not None:
                body[name] = fields[name]
        return body

    def step(self, kind: str, fields: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """(a POST /log body, its expected status) for one item."""
        if kind in ("replay", "conflict", "outcome") and self.bodies:
            decision_id = sorted(self.bodies)[fields["day"] % len(self.bodies)]
            body = self.bodies[decision_id]
            if kind == "replay":
                return dict(body), 200
            if kind == "conflict":
                return {**body, "context": "changed"}, 409
            outcome = fields["ai_recommendation"]
            if self.outcome.get(decision_id) == outcome and self.outcome_entries.get(decision_id) == outcome:
                return {"decision_id": decision_id, "outcome": outcome}, 200
            self.outcome[decision_id] = self.outcome_entries[decision_id] = outcome
            return {"decision_id": decision_id, "outcome": outcome}, 201
        body = self.new_body(fields)
        self.bodies[body["decision_id"]] = body
        self.outcome[body["decision_id"]] = body.get("outcome")
        return body, 201


def _plan_thread(prefix: str, ops: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, Any, Any]]:
    """(path, request, expected) per call: a batch groups this op with the next two as items."""
    model = Model(prefix)
    calls: list[tuple[str, Any, Any]] = []
    i = 0
    while i < len(ops):
        kind, fields = ops[i]
        if kind == "batch":
            items = [model.step(k if k != "batch" else "log", f) for k, f in ops[i : i + 3]]
            calls.append(("/v1/log/batch", {"decisions": [b for b, _ in items]}, [s for _, s in items]))
            i += 3
            continue
        if kind == "calibrate":
            body, status = model.step("log", fields)
            calls.append(("/v1/calibrate", body, 200))
        else:
            body, status = model.step(kind, fields)
            calls.append(("/v1/log", body, status))
        i += 1
    return calls


def _run_threads(key_value: str, plans: list[list[tuple[str, Any, Any]]]) -> list[str]:
    failures: list[str] = []
    barrier = threading.Barrier(len(plans))

    def work(calls: list[tuple[str, Any, Any]]) -> None:
        client = client_for(key_value)
        barrier.wait()
        try:
            for path, body, expected in calls:
                r = client.post(path, body, format="json")
                got = [x["status"] for x in r.json()["results"]] if path.endswith("batch") else r.status_code
                if got != expected:
                    failures.append(f"{path} {body}: {got} != {expected}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(calls,)) for calls in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return failures


def _r(value: Any) -> Any:
    """Float sums added in another order may differ in the last bits."""
    return round(value, 9) if isinstance(value, float) else value


def _state(customer_id: str) -> dict[str, Any]:
    entries = [
        (
            e.type,
            e.decision_ref,
            e.user_id,
            e.model_id,
            e.ai_confidence,
            e.user_decision,
            e.outcome,
            e.calibration_category,
            e.followed_ai,
            e.timestamp,
            e.context,
            e.subgroups,
        )
        for e in AuditEntry.objects.filter(customer_id=customer_id).order_by("sequence")
    ]
    decisions = sorted(
        Decision.objects.filter(customer_id=customer_id).values_list(
            "decision_id",
            "outcome",
            "calibration_category",
            "followed_ai",
            "timestamp",
            "payload_fingerprint",
        )
    )
    aggregates = sorted(
        tuple(sorted((k, _r(v)) for k, v in row.items() if k not in ("id", "customer_id")))
        for row in UserDailyAggregate.objects.filter(customer_id=customer_id).values()
        if any(v for k, v in row.items() if k not in ("id", "customer_id", "user_id", "model_key", "day"))
    )
    stats = sorted(
        tuple(sorted((k, v) for k, v in row.items() if k not in ("id", "customer_id")))
        for row in SubgroupDailyStat.objects.filter(customer_id=customer_id).values()
        if row["count"]
    )
    events = sorted(
        (e.type, e.data.get("decision_id"), e.data.get("calibration_category"), e.data.get("source"))
        for e in Event.objects.filter(customer_id=customer_id)
    )
    return {
        "entries": entries,
        "decisions": decisions,
        "aggregates": aggregates,
        "stats": stats,
        "events": events,
    }


@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(threads=st.lists(thread_ops, min_size=2, max_size=3))
def test_concurrent_writes_equal_a_serial_replay_in_commit_order(threads, settings_rate_limits_off, applier):
    run = next(_run)
    concurrent, serial = make_key(f"conc{run}", "enterprise"), make_key(f"serial{run}", "enterprise")
    plans = [_plan_thread(f"t{t}", ops) for t, ops in enumerate(threads)]
    assert _run_threads(concurrent.value, plans) == []

    # The same writes one by one in the chain's order, to the other customer.
    created: dict[str, tuple[str, dict[str, Any]]] = {}
    for calls in plans:
        for path, body, _ in calls:
            for item in body["decisions"] if path.endswith("batch") else [body]:
                if "user_id" in item:
                    created.setdefault(
                        item["decision_id"], ("/v1/log" if path.endswith("batch") else path, item)
                    )
    api = client_for(serial.value)
    for entry in AuditEntry.objects.filter(customer_id=f"conc{run}").order_by("sequence"):
        if entry.type == "decision":
            path, body = created[entry.decision_ref]
        else:
            path, body = "/v1/log", {"decision_id": entry.decision_ref, "outcome": entry.outcome}
        r = api.post(path, body, format="json")
        assert r.status_code in (200, 201), r.content

    assert _state(f"conc{run}") == _state(f"serial{run}")
    for key in (concurrent, serial):
        verify = client_for(key.value).get("/v1/audit-trail/verify").json()
        assert verify["valid"] is True, verify


@pytest.fixture
def settings_rate_limits_off(settings):
    settings.RATE_LIMITS_ENABLED = False
    return settings
