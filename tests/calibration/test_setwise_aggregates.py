"""The set-wise applier of the calibration aggregates (docs/architecture.md, "The set-wise batch
path") writes exactly what the Python fold of `rules.contribution` writes, column by column and
to the last bit of every double: records with and without confidence, outcome and initial
decision, values that differ only in case and spaces, late outcomes that move a record, and
rows that already hold sums."""

import datetime as dt
import random

import pytest

from calibration import rules
from calibration.models import UserDailyAggregate
from calibration.services import AggregateFold, aggregates_fold_apply
from calibration.setwise import Staged, staged_apply
from tests.conftest import make_key

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

_DAY = dt.date(2026, 11, 20)


def _record(rng: random.Random, category: str | None = None) -> rules.Record:
    ai = rng.choice(["approve", "deny"])
    user = rng.choice([ai, ai, f" {ai.upper()} ", "refer", "deny"])
    outcome = rng.choice([None, None, "approve", "Deny ", "refer"])
    confidence = rng.choice([None, 0.0, 0.5, 1.0, 0.1, 0.35, round(rng.random(), 6), rng.random()])
    initial = rng.choice([None, None, ai, "refer", "approve"])
    category = category or rules.record_category(
        ai_recommendation=ai, user_decision=user, confidence=confidence, outcome=outcome, probe=False
    )
    return rules.Record(ai, user, confidence, outcome, initial, category)


def _changes(seed: int, n: int) -> list[Staged]:
    rng = random.Random(seed)
    changes = []
    for _ in range(n):
        record = _record(rng)
        previous = None
        if rng.random() < 0.2:  # a late outcome moved the record
            previous = rules.Record(
                record.ai_recommendation,
                record.user_decision,
                record.confidence,
                rng.choice([None, "approve"]),
                record.initial_decision,
                _record(rng).category,
            )
        user = f"user-{rng.randrange(6)}"
        model = rng.choice([None, "", "m1", "M1", "*"])
        changes.append(Staged(user, model, _DAY - dt.timedelta(days=rng.randrange(3)), record, previous))
    return changes


def _rows(customer_id: str) -> dict[tuple, dict]:
    return {
        (row.pop("user_id"), row.pop("model_key"), row.pop("day")): row
        for row in UserDailyAggregate.objects.filter(customer_id=customer_id).values(
            *rules.SUM_FIELDS, "user_id", "model_key", "day"
        )
    }


def _fold(customer_id: str, changes: list[Staged]) -> None:
    fold = AggregateFold()
    for change in changes:
        fold.add(user_id=change.user_id, model_id=change.model_id, day=change.day, delta=change.delta())
    aggregates_fold_apply(customer_id=customer_id, fold=fold)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_set_wise_aggregates_equal_the_python_fold_to_the_last_bit(seed):
    folded, setwise = "folded", "setwise"
    make_key(folded), make_key(setwise)
    first, second = _changes(seed, 400), _changes(seed + 100, 300)
    _fold(folded, first)
    staged_apply(customer_id=setwise, changes=first)
    assert _rows(setwise) == _rows(folded)
    _fold(folded, second)  # onto rows that already hold sums
    staged_apply(customer_id=setwise, changes=second)
    rows = _rows(setwise)
    assert rows == _rows(folded)
    assert any(row["rair_den"] or row["rsr_den"] or row["sw_den"] for row in rows.values())
    assert any(key[1] == "*" and key[1] != "m1" for key in rows)


def test_two_set_wise_writes_in_one_transaction_each_count_only_their_own_changes():
    customer, reference = "twice", "once"
    make_key(customer), make_key(reference)
    changes = _changes(7, 120)
    staged_apply(customer_id=customer, changes=changes[:60])
    staged_apply(customer_id=customer, changes=changes[60:])
    _fold(reference, changes[:60])
    _fold(reference, changes[60:])
    assert _rows(customer) == _rows(reference)
