"""The set-wise applier of the subgroup statistics (docs/architecture.md, "The set-wise batch
path") writes exactly the rows of the Python fold: the same keys (their SHA-256 computed in SQL
as StatKey.digest computes it, also for a year before 1000 and for values outside ASCII), the
same sums, and no row for a key whose changes cancel out."""

import datetime as dt
import random

import pytest

from bias.models import SubgroupDailyStat
from bias.setwise import Staged, folded, staged_apply
from bias.stats import decision_state, upsert_stats
from tests.conftest import make_key

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


class _Decision:
    """The attributes decision_state reads."""

    def __init__(self, rng: random.Random) -> None:
        self.ai_recommendation = rng.choice(["approve", "Approve ", "Straße", "deny"])
        self.user_decision = rng.choice(["approve", "STRASSE", "deny", "ünd"])
        self.outcome = rng.choice([None, "approve", "deny"])
        self.calibration_category = rng.choice(["CALIBRATED", "OVERTRUSTING", "UNSCORED"])
        self.ai_confidence = rng.choice([None, 0.25, 0.5, rng.random()])
        self.model_id = rng.choice([None, "m1", "modèle"])
        self.model_version = rng.choice([None, "1"])
        day = rng.choice([dt.date(2026, 11, 20), dt.date(999, 1, 2)])
        self.timestamp = dt.datetime.combine(day, dt.time(12), tzinfo=dt.UTC)


def _changes(seed: int) -> list[Staged]:
    rng = random.Random(seed)
    changes = []
    for _ in range(300):
        state = decision_state(_Decision(rng))
        attributes = {"gender": rng.choice(["f", "m"]), "custom.région": rng.choice(["nord", "sud"])}
        changes.append(Staged(state, attributes, +1))
        if rng.random() < 0.2:  # moved out again: the key's changes cancel
            changes.append(Staged(state, attributes, -1))
    return changes


def _rows(customer_id: str) -> list[tuple]:
    fields = [
        f.attname for f in SubgroupDailyStat._meta.concrete_fields if f.attname not in ("id", "customer_id")
    ]
    return sorted(SubgroupDailyStat.objects.filter(customer_id=customer_id).values_list(*fields))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_set_wise_statistics_equal_the_python_fold(seed):
    make_key("folded"), make_key("setwise")
    changes = _changes(seed)
    upsert_stats("folded", folded(changes))
    staged_apply(customer_id="setwise", changes=changes)
    rows = _rows("setwise")
    assert rows == _rows("folded")
    assert any(row[1].year == 999 for row in rows)
