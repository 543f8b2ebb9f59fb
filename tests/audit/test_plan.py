"""The planning step is pure (docs/architecture.md, "One POST /log, from the view to the commit"): given the stored
rows it runs no query, and it leaves its inputs (the stored rows, the items) as they were; the
effects it plans are its own objects."""

import copy
import datetime as dt
from typing import Any

import pytest
from django.db import transaction

from audit import services
from audit.inputs import item_validated
from audit.models import AuditEntry, Decision
from audit.pipeline import _contributors_load, stored_load
from audit.plan import plan_items
from keys.models import Customer
from tests.audit.factories import decision_body


def _fields(decision: Decision) -> dict[str, Any]:
    return {f.attname: getattr(decision, f.attname) for f in Decision._meta.concrete_fields}


@pytest.mark.django_db
def test_the_plan_runs_no_query_and_leaves_its_inputs_unchanged(django_assert_num_queries):
    customer = Customer.objects.create(id="acme")
    logged = decision_body(decision_id="stored-1", ai_recommendation="approve", user_decision="approve")
    services.decisions_log_batch(customer=customer, items=[logged, decision_body(decision_id="stored-2")])
    bodies = [
        {"decision_id": "stored-1", "outcome": "deny"},  # a late outcome of a stored decision
        {"decision_id": "stored-1", "outcome": "approve"},  # and another, over the first
        logged,  # a replay
        {**logged, "context": "another payload"},  # a conflict
        decision_body(decision_id="new-1"),
        {"decision_id": "new-1", "outcome": "approve"},  # an outcome of a decision of this plan
        {"decision_id": "nobody", "outcome": "deny"},  # 404
    ]
    items = [item_validated(body) for body in bodies]
    with transaction.atomic():
        loaded = _contributors_load(customer, items)
        stored = stored_load(customer, items)
        stored.loaded.update(loaded)
        before = {key: _fields(decision) for key, decision in stored.decisions.items()}
        entries_before = {key: _fields_of(entry) for key, entry in stored.decision_entries.items()}
        items_before = copy.deepcopy(items)
        loaded_before = copy.deepcopy(stored.loaded)
        with django_assert_num_queries(0):
            plan = plan_items(
                customer=customer,
                items=items,
                bodies=bodies,
                stored=stored,
                now=dt.datetime(2026, 11, 25, 12, tzinfo=dt.UTC),
                sources=["log"] * len(items),
                new_entry_id=AuditEntry._meta.get_field("id").get_default,
            )
    assert [r.status for r in plan.results] == [201, 201, 200, 409, 201, 201, 404]
    assert {key: _fields(decision) for key, decision in stored.decisions.items()} == before
    assert {key: _fields_of(entry) for key, entry in stored.decision_entries.items()} == entries_before
    assert items == items_before and stored.loaded == loaded_before
    # the planned change is a copy that carries the last outcome; the stored row is untouched
    (changed,) = plan.changed
    assert changed.decision_id == "stored-1" and changed.outcome == "approve"
    assert changed is not stored.decisions["stored-1"] and stored.decisions["stored-1"].outcome is None


def _fields_of(entry: AuditEntry) -> dict[str, Any]:
    return {f.attname: getattr(entry, f.attname) for f in AuditEntry._meta.concrete_fields}
