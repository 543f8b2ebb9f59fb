"""The weekly sums of the calibration aggregates (docs/architecture.md, Calibration aggregates):
kept by the database from every change of a daily row, and read for a window's whole weeks."""

import datetime as dt
import math
from collections import defaultdict

import pytest
from django.db import connection
from django.db.models import F

from calibration import rules, selectors, weekly
from calibration.models import UserDailyAggregate, UserWeeklyAggregate
from calibration.selectors import DayRange
from config.db.bulk import additive_upsert
from keys.models import Customer
from tests.audit.erasure_helpers import erase

pytestmark = pytest.mark.django_db

TODAY = dt.datetime.now(dt.UTC).date()


@pytest.fixture
def customer(api) -> Customer:
    return Customer.objects.get(pk="acme")


def at(days_ago: int, hour: int = 12) -> str:
    day = TODAY - dt.timedelta(days=days_ago)
    return dt.datetime.combine(day, dt.time(hour), tzinfo=dt.UTC).isoformat()


def log_batch(api, items):
    response = api.post("/v1/log/batch", {"decisions": items}, format="json")
    assert response.status_code == 200 and response.json()["rejected"] == 0, response.content


def history(api) -> None:
    """Five reviewers over 40 days and two models; late outcomes on old decisions."""
    items = []
    for i in range(400):
        days_ago = (i * 7) % 40
        items.append(
            {
                "decision_id": f"w-{i}",
                "user_id": f"rev-{i % 5}",
                "model_id": ["m-a", "m-b"][i % 2],
                "ai_recommendation": "approve",
                "ai_confidence": [0.95, 0.8, 0.6, 0.4, 0.2][(i // 5) % 5],
                "user_decision": "approve" if (i * 13) % 10 < 7 else "deny",
                **({"outcome": "approve" if i % 3 else "deny"} if i % 4 == 0 else {}),
                "timestamp": at(days_ago, hour=i % 24),
            }
        )
    log_batch(api, items)
    for i in range(1, 400, 9):  # late outcomes move old days' rows
        response = api.post("/v1/log", {"decision_id": f"w-{i}", "outcome": "deny"}, format="json")
        assert response.status_code == 201, response.content


def weeks_from_days(customer_id: str) -> dict[tuple[str, str, dt.date], dict[str, float]]:
    out: dict[tuple[str, str, dt.date], dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in UserDailyAggregate.objects.filter(customer_id=customer_id).values():
        week = row["day"] - dt.timedelta(days=row["day"].weekday())
        for name in rules.SUM_FIELDS:
            out[(row["user_id"], row["model_key"], week)][name] += row[name]
    return {key: dict(sums) for key, sums in out.items() if sums["n"]}


def stored_weeks(customer_id: str) -> dict[tuple[str, str, dt.date], dict[str, float]]:
    return {
        (row["user_id"], row["model_key"], row["week"]): {name: row[name] for name in rules.SUM_FIELDS}
        for row in UserWeeklyAggregate.objects.filter(customer_id=customer_id).values()
    }


def assert_same_sums(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        for name in rules.SUM_FIELDS:
            assert math.isclose(a[key][name], b[key][name], rel_tol=1e-12, abs_tol=1e-9), (key, name)


def test_every_week_row_is_the_sum_of_its_days_after_logs_late_outcomes_and_an_erasure(api, customer):
    history(api)
    days = UserDailyAggregate.objects.filter(customer_id=customer.pk)
    assert days.values("day").distinct().count() > 30  # several weeks, two models, five reviewers
    assert_same_sums(stored_weeks(customer.pk), weeks_from_days(customer.pk))
    assert erase(api, user_id="rev-3", legal_basis="gdpr_art_17_1_b").status_code == 202
    weeks = stored_weeks(customer.pk)
    assert not any(user == "rev-3" for user, _, _ in weeks)  # moved to the pseudonym, none left at 0
    assert any(user.startswith("erased:") for user, _, _ in weeks)
    assert_same_sums(weeks, weeks_from_days(customer.pk))
    # a deleted daily row takes its sums away from its week (and a week left empty goes)
    days.filter(user_id="rev-0").delete()
    assert_same_sums(stored_weeks(customer.pk), weeks_from_days(customer.pk))
    assert not UserWeeklyAggregate.objects.filter(customer_id=customer.pk, user_id="rev-0").exists()
    # emptied weekly table first, then the daily one (as a test database's flush does): the
    # deletes take nothing from rows that are gone and make none
    UserWeeklyAggregate.objects.all().delete()
    days.delete()
    assert not UserWeeklyAggregate.objects.exists()


def close(a, b) -> bool:
    """Equal, floats to 1e-12 (the weekly rows add the same terms in another order)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def per_user_from_days(customer_id: str, days: DayRange, model_key: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(rules.SUM_FIELDS, 0))
    rows = UserDailyAggregate.objects.filter(
        customer_id=customer_id, model_key=model_key, day__gte=days.start, day__lte=days.end
    )
    for row in rows.values():
        for name in rules.SUM_FIELDS:
            out[row["user_id"]][name] += row[name]
    return out


@pytest.mark.parametrize(
    ("start_ago", "end_ago"),
    [(39, 0), (35, 3), (13, 7), (3, 1), (1, 1)],
    ids=["40 days", "inner 33 days", "one week or none", "three days", "one day"],
)
@pytest.mark.parametrize("model_id", [None, "m-b"])
def test_a_window_read_through_whole_weeks_gives_the_figures_of_its_days(
    api, customer, start_ago, end_ago, model_id
):
    history(api)
    days = DayRange(TODAY - dt.timedelta(days=start_ago), TODAY - dt.timedelta(days=end_ago))
    window = selectors.organization_window(customer, days=days, model_id=model_id)
    per_user = per_user_from_days(customer.pk, days, model_id or "*")
    sums = {name: sum(user[name] for user in per_user.values()) for name in rules.SUM_FIELDS}
    over = rules.Clusters.of((u["fwo_sum"], u["wo_sum"]) for u in per_user.values())
    under = rules.Clusters.of((u["uwu_sum"], u["wu_sum"]) for u in per_user.values())
    expected = rules.figures(sums, over=over, under=under)
    assert window.figures["decisions"] == expected["decisions"] > 0
    for key, value in expected.items():
        assert close(window.figures[key], value), key
    listed = {
        u["user_id"]: u for u in selectors.user_calibration_list(customer, days=days, model_id=model_id)
    }
    assert listed.keys() == per_user.keys()
    for user_id, user_sums in per_user.items():
        assert listed[user_id]["decisions"] == user_sums["n"]
        assert math.isclose(listed[user_id]["trust_score"] or 0, rules.figures(user_sums)["trust_score"] or 0)


D = dt.date.fromisoformat


@pytest.mark.parametrize(
    ("start", "end", "weeks"),
    [
        ("2026-11-23", "2026-11-29", ("2026-11-23", "2026-11-23")),  # Monday to Sunday: one week
        ("2026-11-24", "2026-11-29", None),  # Tuesday to Sunday: none whole
        ("2026-11-23", "2026-11-28", None),  # Monday to Saturday
        ("2026-08-29", "2026-11-26", ("2026-08-31", "2026-11-16")),  # Saturday to Thursday: 12 weeks
        ("0001-01-01", "0001-01-31", ("0001-01-01", "0001-01-22")),  # the calendar's first days (a Monday)
        ("9999-10-01", "9999-12-31", None),  # a report's open end
    ],
)
def test_whole_weeks_are_the_mondays_of_the_weeks_inside_the_window(start, end, weeks):
    expected = None if weeks is None else (D(weeks[0]), D(weeks[1]))
    assert selectors.whole_weeks(DayRange(D(start), D(end))) == expected


def _former_trigger_body(columns: list[str]) -> str:
    """The PostgreSQL trigger's body before an update that keeps its keys and week was folded in
    one statement: every update took OLD's sums away (removing a week left with no decision),
    then added NEW's."""
    return (
        "BEGIN "
        f"IF TG_OP IN ('UPDATE', 'DELETE') THEN {weekly._take('postgresql', columns)} END IF; "
        f"IF TG_OP IN ('INSERT', 'UPDATE') THEN {weekly._add('postgresql', columns)} END IF; "
        "RETURN NULL; END;"
    )


def _daily_writes(customer_id: str) -> list[list[tuple]]:
    """Upserts, a re-key, a delete and an update of a day whose week row is gone; the weekly
    rows they leave after the upserts and at the end, every column as stored."""
    monday, sunday = dt.date(2026, 11, 2), dt.date(2026, 11, 15)
    thirds = [1 / 3, 0.1, 0.7, 2 / 7, 0.3]
    # one week of two days (the sums of two magnitudes: the order of the terms shows), one of one day
    for step, value in enumerate(thirds * 3):
        for user, day, scale in (
            ("a", monday, 1e6),
            ("a", monday + dt.timedelta(days=3), 1),
            ("b", sunday, 1),
        ):
            sums = dict.fromkeys(rules.SUM_FIELDS, 0) | {"n": 1, "followed": step % 2, "conf_n": 1}
            sums |= {"conf_sum": value, "p_sum": value * scale + 0.1, "brier_sum": (value - 0.5) ** 2}
            additive_upsert(
                UserDailyAggregate,
                key=("customer_id", "user_id", "model_key", "day"),
                values=rules.SUM_FIELDS,
                rows=[(customer_id, user, "*", day, *(sums[name] for name in rules.SUM_FIELDS))],
            )
    upserted = _weeks(customer_id)
    days = UserDailyAggregate.objects.filter(customer_id=customer_id)
    days.filter(user_id="a", day=monday).update(user_id="c")  # re-keyed: moved to another week row
    days.filter(user_id="b").update(conf_sum=F("conf_sum") + 0.1, n=F("n") + 1)
    UserWeeklyAggregate.objects.filter(customer_id=customer_id, user_id="c").delete()
    days.filter(user_id="c").update(p_sum=F("p_sum") + 0.2)  # its week row is gone: made again
    days.filter(user_id="a").delete()
    return [upserted, _weeks(customer_id)]


def _weeks(customer_id: str) -> list[tuple]:
    rows = UserWeeklyAggregate.objects.filter(customer_id=customer_id).order_by(
        "user_id", "model_key", "week"
    )
    return [
        tuple(repr(row[name]) for name in ("user_id", "model_key", "week", *rules.SUM_FIELDS))
        for row in rows.values()
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement update is PostgreSQL's")
def test_an_update_in_one_statement_leaves_the_week_rows_of_the_take_and_the_add_to_the_bit(customer):
    columns = list(rules.SUM_FIELDS)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE OR REPLACE FUNCTION {weekly.FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ "
            f"{_former_trigger_body(columns)} $$"
        )
        former = _daily_writes(customer.pk)
        UserWeeklyAggregate.objects.filter(customer_id=customer.pk).delete()
        UserDailyAggregate.objects.filter(customer_id=customer.pk).delete()
        for statement in weekly.install_sql("postgresql", columns):
            cursor.execute(statement)
    now = _daily_writes(customer.pk)
    assert [len(weeks) for weeks in now] == [2, 2] and {row[0] for row in now[1]} == {"'b'", "'c'"}
    assert now == former
