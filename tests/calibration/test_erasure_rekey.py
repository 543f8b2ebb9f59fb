"""An erasure runs in parts, and a reviewer's decisions logged meanwhile write daily rows under
their name again, on days whose rows an earlier part already moved to the pseudonym: the next
part adds such a row into the pseudonym's and deletes it (calibration.contributions,
rekey_erased_user), where a plain re-key broke the one-row-per-day constraint and the part
failed. The weeks follow their days; of two risk states the later one stays."""

import datetime as dt

import pytest

from audit.registry import Erased
from calibration.contributions import rekey_erased_user
from calibration.models import RiskUserState, UserDailyAggregate, UserWeeklyAggregate
from keys.models import Customer

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 4)  # a Wednesday
PSEUDONYM = "erased:0123abcd"


def _day(customer: Customer, user_id: str, day: dt.date, **sums: float) -> None:
    UserDailyAggregate.objects.create(customer=customer, user_id=user_id, model_key="*", day=day, **sums)


def _sums(model: type[UserDailyAggregate] | type[UserWeeklyAggregate], user_id: str) -> dict:
    rows = model.objects.filter(customer_id="rekey", user_id=user_id).values()
    return {
        row.get("day", row.get("week")): {name: row[name] for name in ("n", "followed", "conf_sum")}
        for row in rows
    }


def test_a_day_the_pseudonym_holds_is_added_into_it_and_the_weeks_follow():
    customer = Customer.objects.create(id="rekey")
    _day(customer, PSEUDONYM, DAY, n=5, followed=1, conf_sum=2.5)  # moved by an earlier part
    _day(customer, "rev", DAY, n=3, followed=2, conf_sum=1.25)  # logged since, the same day
    _day(customer, "rev", DAY + dt.timedelta(days=1), n=1, conf_sum=0.5)  # a day it does not hold
    now = dt.datetime.now(dt.UTC)
    RiskUserState.objects.create(customer=customer, user_id=PSEUDONYM, at_risk=True, updated_at=now)
    RiskUserState.objects.create(
        customer=customer, user_id="rev", at_risk=False, trust_score=0.9, updated_at=now + dt.timedelta(1)
    )

    changed = rekey_erased_user(
        Erased(
            customer_id="rekey", user_id="rev", pseudonym=PSEUDONYM, first_timestamp=None, last_timestamp=None
        )
    )

    assert changed == 3
    assert _sums(UserDailyAggregate, "rev") == {}
    assert _sums(UserDailyAggregate, PSEUDONYM) == {
        DAY: {"n": 8, "followed": 3, "conf_sum": 3.75},
        DAY + dt.timedelta(days=1): {"n": 1, "followed": 0, "conf_sum": 0.5},
    }
    monday = DAY - dt.timedelta(days=DAY.weekday())
    assert _sums(UserWeeklyAggregate, PSEUDONYM) == {monday: {"n": 9, "followed": 3, "conf_sum": 4.25}}
    assert not UserWeeklyAggregate.objects.filter(customer_id="rekey", user_id="rev", n__gt=0).exists()
    state = RiskUserState.objects.get(customer_id="rekey")  # one left, the later, renamed
    assert (state.user_id, state.at_risk, state.trust_score) == (PSEUDONYM, False, 0.9)
