"""The reads of the calibration aggregates sum a reviewer's rows in the order of their day, not in
the order the rows were written (docs/architecture.md, Calibration aggregates: floats are summed in a fixed
order): three daily rows whose float sum depends on the order of its terms, written out of order."""

import datetime as dt

import pytest
from django.db import connection

from calibration import rules, selectors
from calibration.models import UserDailyAggregate
from calibration.periods import period_start
from calibration.selectors import DayRange
from keys.models import Customer

pytestmark = pytest.mark.django_db

TODAY = dt.datetime.now(dt.UTC).date()
# by day: 1e16 + 1.0 rounds back to 1e16, so the three sum to 0.0 in day order; written in the
# order (last, first, second) they would sum to 1.0
DAYS = [TODAY - dt.timedelta(days=2), TODAY - dt.timedelta(days=1), TODAY]
GAPS = [1e16, 1.0, -1e16]
WRITTEN = [2, 0, 1]


@pytest.fixture
def customer(api) -> Customer:
    if connection.vendor == "postgresql":  # rows read in the order they lie, whatever the plan
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off")
    customer = Customer.objects.get(pk="acme")
    for at in WRITTEN:
        UserDailyAggregate.objects.create(
            customer=customer, user_id="u", day=DAYS[at], n=1, scored_n=1, gap_sum=GAPS[at]
        )
    return customer


def in_day_order(values: list[float]) -> float:
    total = 0.0
    for value in values:
        total += value
    return total


def test_a_users_rows_are_summed_by_day(customer):
    days = DayRange(DAYS[0], DAYS[-1])
    assert in_day_order(GAPS) == 0.0
    assert selectors.user_sums(customer, user_id="u", days=days)["gap_sum"] == 0.0
    rows = selectors._per_user_rows(customer, days, None)
    assert [(row[0], row[1 + rules.SUM_FIELDS.index("gap_sum")]) for row in rows] == [("u", 0.0)]


@pytest.mark.parametrize("interval", ["day", "week", "month"])
def test_a_trend_periods_rows_are_summed_by_day(customer, interval, monkeypatch):
    seen = {}
    monkeypatch.setattr(selectors, "trend_point", lambda start, sums, pi, **_: seen.setdefault(start, sums))
    monkeypatch.setattr(selectors, "trend_summary", lambda points, whole: {})
    selectors.trend(customer, days=DayRange(DAYS[0], DAYS[-1]), interval=interval)
    expected: dict[dt.date, list[float]] = {}
    for day, gap in zip(DAYS, GAPS, strict=True):
        expected.setdefault(period_start(day, interval), []).append(gap)
    assert {start: sums["gap_sum"] for start, sums in seen.items() if sums} == {
        start: in_day_order(gaps) for start, gaps in expected.items()
    }
