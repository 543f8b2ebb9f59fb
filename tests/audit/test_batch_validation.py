"""A batch's items validated at once (audit.inputs.decisions_at_once) give what each item
judged alone gives (audit.inputs.item_validated): the same items, and the same problem
documents for the ones refused, whatever the batch mixes."""

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AliasChoices

from audit.inputs import DecisionInput, Item, item_validated
from audit.services import items_validated
from config.exceptions import DomainError


def _decision(i: int) -> dict[str, object]:
    return {
        "decision_id": f"d-{i}",
        "user_id": f"u{i}",
        "ai_recommendation": "approve",
        "user_decision": "deny",
        "timestamp": "2026-11-20T09:00:00Z",
    }


# Each a change to a valid decision: what a batch item may hold, valid or not.
VARIANTS: list[dict[str, object]] = [
    {},
    {"ai_confidence": 0.7},
    {"confidence": 0.7},
    {"ai_confidence": 0.7, "confidence": 0.7},
    {"ai_confidence": 0.7, "confidence": 0.6},
    {"ai_confidence": None, "confidence": 0.4},
    {"model_version": None},
    {"context": None},
    {"subgroups": {"gender": " f "}},
    {"subgroups": {"custom": {"region": "north", " region ": "south"}}},
    {"metadata": {"a": [1, 2.5, "x"]}},
    {"metadata": {"a": "\x00"}},
    {"unknown": "kept out"},
    {"unknown": "\ud800"},
    {"timestamp": "2026-11-20T09:00:00"},
    {"timestamp": "2026-11-20T10:00:00+01:00"},
    {"timestamp": 1700000000},
    {"timestamp": "yesterday"},
    {"review_seconds": 30},
    {"review_started_at": "2026-11-20T08:59:30Z"},
    {"review_started_at": "2026-11-20T08:59:30Z", "review_seconds": 30},
    {"review_started_at": "2026-11-20T08:59:30Z", "review_seconds": 90},
    {"review_started_at": "2026-11-20T09:00:30Z"},
    {"probe": {"kind": "known_wrong", "correct_decision": "deny"}},
    {"probe": {"kind": "known_wrong", "correct_decision": "deny"}, "outcome": " DENY "},
    {"probe": {"kind": "known_wrong", "correct_decision": "deny"}, "outcome": None},
    {"probe": {"kind": "known_wrong", "correct_decision": "deny"}, "outcome": "approve"},
    {"probe": {"kind": "known_right", "correct_decision": "deny"}},
    {"probe": {"kind": "other", "correct_decision": "deny"}},
    {"outcome": "approve"},
    {"user_id": ""},
    {"user_id": "   "},
    {"user_id": None},
    {"user_id": 3},
    {"ai_confidence": 1.5},
    {"ai_confidence": "0.5"},
    {"decision_id": "has space"},
    {"user_decision": "x" * 1001},
]


def _item(i: int, variant: int) -> object:
    if variant == len(VARIANTS):
        return {"decision_id": f"d-{i}", "outcome": "approve"}  # a late outcome
    if variant == len(VARIANTS) + 1:
        return ["not", "an", "object"]
    body = _decision(i)
    body.update(VARIANTS[variant])
    return body


def _seen(result: Item | DomainError) -> object:
    if isinstance(result, DomainError):
        return ("error", result.code, result.detail, result.errors)
    return (result.kind, type(result.data).__name__, result.data.model_dump())


def _alone(body: object) -> object:
    try:
        return _seen(item_validated(body, strings_checked=False))
    except DomainError as exc:
        return _seen(exc)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(VARIANTS) + 1), min_size=1, max_size=12))
def test_a_batch_at_once_judges_each_item_as_alone(variants):
    items = [_item(i, v) for i, v in enumerate(variants)]
    assert [_seen(r) for r in items_validated(items)] == [_alone(body) for body in items]


def test_a_clean_batch_goes_at_once_and_a_probe_outcome_reads_as_its_correct_decision():
    items = [
        _item(0, 0),
        _item(
            1,
            VARIANTS.index(
                {"probe": {"kind": "known_wrong", "correct_decision": "deny"}, "outcome": " DENY "}
            ),
        ),
    ]
    first, second = items_validated(items)
    assert isinstance(first, Item) and first.data.timestamp == dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    assert isinstance(second, Item) and second.data.outcome == "deny"


def _wire_names() -> list[str]:
    names: set[str] = set()
    for name, info in DecisionInput.model_fields.items():
        names.add(name)
        if isinstance(info.validation_alias, AliasChoices):
            names.update(choice for choice in info.validation_alias.choices if isinstance(choice, str))
    return sorted(names)


@pytest.mark.parametrize("name", _wire_names())
@pytest.mark.parametrize(
    "beside",
    [
        {},
        {"ai_confidence": 0.5},
        {"confidence": 0.5},
        {"outcome": "deny"},
        {"probe": {"kind": "known_wrong", "correct_decision": "deny"}},
        {"review_started_at": "2026-11-20T08:59:30Z", "review_seconds": 30},
    ],
)
def test_every_field_sent_as_null_reads_the_same_at_once_as_alone(name, beside):
    """At once the nulls are not dropped first: each one the model takes must read as the field
    left out, as body_parse makes it for an item judged alone."""
    body = {**_decision(0), **beside, name: None}
    assert [_seen(r) for r in items_validated([body, _decision(1)])] == [_alone(body), _alone(_decision(1))]
