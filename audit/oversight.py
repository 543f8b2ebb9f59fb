"""Reads behind the oversight figures (docs/reference/oversight.md): review times per model,
review and probe counts per reviewer, aggregated in SQL over the decisions of a window. No
decision is loaded into Python; the statistics on top (thresholds, Wilson intervals, d') are
the oversight app's, computed from these few rows.

The exact median is PostgreSQL's `percentile_cont(0.5)` (an ordered-set aggregate that skips
NULLs); SQLite has none, so there it is the mean of the one or two middle rows picked with
window functions (ROW_NUMBER and COUNT over the group). Both give the mean of the two middle
values for an even count."""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from audit.measures import same
from audit.models import Decision, ProbeKind
from config.sqlparams import SQLValue

_TABLE = Decision._meta.db_table


@dataclass(frozen=True)
class ModelReviewTimes:
    model_id: str | None
    timed_decisions: int
    median_review_seconds: float | None


@dataclass(frozen=True)
class UserReviewCounts:
    """One reviewer's real decisions in the window. `quick_*`: the timed decisions under their
    model's threshold; `considered_*`: the other timed ones. `*_ai_wrong`: those whose outcome
    is known and shows the AI was wrong; `*_followed_ai_wrong`: of those, the ones followed."""

    user_id: str
    decisions: int
    timed_decisions: int
    median_review_seconds: float | None
    quick_decisions: int
    quick_agreements: int
    quick_ai_wrong: int
    quick_followed_ai_wrong: int
    considered_ai_wrong: int
    considered_followed_ai_wrong: int


@dataclass(frozen=True)
class ProbeCounts:
    user_id: str
    probes: int
    known_wrong: int
    caught: int
    corrected: int
    known_right: int
    false_overrides: int


Narrow = str | list[str] | None  # one value, any of several, or (None, []) all


def _window(
    customer_id: str, since: dt.datetime, until: dt.datetime, **equal: Narrow
) -> tuple[str, list[SQLValue]]:
    """The WHERE clause of one customer's decisions made in [since, until), narrowed by the
    given values (a string: equal; a list: any of them; None or []: not narrowed)."""
    sql = "customer_id = %s AND timestamp >= %s AND timestamp < %s"
    adapt = connection.ops.adapt_datetimefield_value  # SQLite keeps naive UTC text
    params: list[SQLValue] = [customer_id, adapt(since), adapt(until)]
    for column, value in equal.items():
        if isinstance(value, list) and value:
            sql += f" AND {column} IN ({', '.join(['%s'] * len(value))})"
            params.extend(value)
        elif isinstance(value, str):
            sql += f" AND {column} = %s"
            params.append(value)
    return sql, params


def _medians(group: str, where: str) -> str:
    """SELECT group, count, median of review_seconds over the rows of `where`, per group."""
    if connection.vendor == "postgresql":
        return (
            f"SELECT {group}, COUNT(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY review_seconds) "  # noqa: S608
            f"FROM {_TABLE} WHERE {where} GROUP BY {group}"
        )
    return (
        f"SELECT g, MAX(n), AVG(s) FROM ("  # noqa: S608
        f"SELECT {group} AS g, review_seconds AS s, "
        f"ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY review_seconds) AS rn, "
        f"COUNT(*) OVER (PARTITION BY {group}) AS n FROM {_TABLE} WHERE {where}"
        ") AS ranked WHERE rn IN ((n + 1) / 2, (n + 2) / 2) GROUP BY g"
    )


_TIMED_REAL = "review_seconds IS NOT NULL AND probe_kind IS NULL"
# The medians sort the window's timed decisions (65,000 of them in 30 days at a million
# decisions): enough memory that the sort does not spill to disk, for these statements only.
_SORT_MEMORY = "32MB"


# Any: database rows of mixed column types
@contextmanager
def _cursor() -> Iterator[Any]:
    """A cursor in a transaction whose sorts may use _SORT_MEMORY on PostgreSQL."""
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SET LOCAL work_mem = '{_SORT_MEMORY}'")
        yield cursor


def review_times_by_model(
    customer_id: str, *, since: dt.datetime, until: dt.datetime, model_id: Narrow = None
) -> list[ModelReviewTimes]:
    """Per model (a missing model is its own group): the timed real decisions made in the
    window and the exact median of their review_seconds. Models with none are absent."""
    where, params = _window(customer_id, since, until, model_id=model_id)
    with _cursor() as cursor:
        cursor.execute(_medians("model_id", f"{where} AND {_TIMED_REAL}"), params)
        rows = cursor.fetchall()
    return sorted(
        (ModelReviewTimes(row[0], int(row[1]), float(row[2])) for row in rows),
        key=lambda m: (m.model_id is None, m.model_id or ""),
    )


def _threshold_case(thresholds: dict[str | None, float], params: list[SQLValue]) -> str:
    """CASE picking each decision's model threshold (NULL for a model with no timed decision,
    so nothing is quick there)."""
    parts = []
    for model_id, threshold in thresholds.items():
        if model_id is None:
            parts.append("WHEN model_id IS NULL THEN %s")
            params.append(threshold)
        else:
            parts.append("WHEN model_id = %s THEN %s")
            params.extend([model_id, threshold])
    return f"CASE {' '.join(parts)} ELSE NULL END" if parts else "NULL"


# Any: grouped rows (user, quick, followed, recommendation, outcome, count)
def _ai_wrong_counts(rows: list[tuple[Any, ...]]) -> dict[str, tuple[Any, int, int, int, int]]:
    """Per reviewer: (user, quick decisions where the AI was wrong, of them followed, considered
    ones where it was wrong, of them followed)."""
    out: dict[str, list[int]] = {}
    wrong: dict[tuple[str, str], bool] = {}
    for user, quick, followed, recommendation, outcome, n in rows:
        is_wrong = wrong.get((recommendation, outcome))
        if is_wrong is None:
            is_wrong = wrong[(recommendation, outcome)] = not same(outcome, recommendation)
        if not is_wrong:
            continue
        counts = out.setdefault(user, [0, 0, 0, 0])
        at = 0 if int(quick) == 1 else 2
        counts[at] += int(n)
        counts[at + 1] += int(n) if followed else 0
    return {user: (user, counts[0], counts[1], counts[2], counts[3]) for user, counts in out.items()}


def review_counts_by_user(
    customer_id: str,
    *,
    since: dt.datetime,
    until: dt.datetime,
    thresholds: dict[str | None, float],
    model_id: Narrow = None,
    user_id: Narrow = None,
) -> list[UserReviewCounts]:
    """Per reviewer with at least one real decision in the window: counts of decisions, timed
    ones, quick ones (review_seconds under their model's threshold in `thresholds`), quick
    agreements, and the over-reliance counts when quick and when considered; plus the median of
    their timed decisions. The rows are reviewers, never decisions:

    - the timed real decisions grouped per reviewer (on PostgreSQL with the median in the same
      pass; on SQLite the median is a second, windowed statement);
    - the over-reliance counts from the timed real decisions with a known outcome;
    - the decisions per reviewer: all of the window's decisions less its probes.
    On PostgreSQL each is an index-only scan (audit_dec_timed_ts, audit_dec_timed_known_ts,
    audit_dec_cust_ts_user and the probes' partial index): no decision row is read."""
    threshold_params: list[SQLValue] = []
    threshold = _threshold_case(thresholds, threshold_params)
    where, window_params = _window(customer_id, since, until, model_id=model_id, user_id=user_id)
    timed_where = f"{where} AND {_TIMED_REAL}"
    postgresql = connection.vendor == "postgresql"

    def count(condition: str) -> str:
        return f"SUM(CASE WHEN {condition} THEN 1 ELSE 0 END)"

    def marked(columns: str, condition: str) -> str:
        """The rows with `quick`: each compared with its threshold once (OFFSET 0 keeps
        PostgreSQL from folding this SELECT into the outer one, which would repeat the CASE
        for every count)."""
        return (
            f"(SELECT user_id, {columns}, CASE WHEN review_seconds < ({threshold}) THEN 1 ELSE 0 END AS quick "  # noqa: S608
            f"FROM {_TABLE} WHERE {condition}{' OFFSET 0' if postgresql else ''}) AS t"
        )

    median = "percentile_cont(0.5) WITHIN GROUP (ORDER BY review_seconds)" if postgresql else "NULL"
    timed_sql = (
        f"SELECT user_id, COUNT(*), {median}, {count('quick = 1')}, {count('quick = 1 AND followed_ai')} "  # noqa: S608
        f"FROM {marked('review_seconds, followed_ai', timed_where)} GROUP BY user_id"
    )
    # Whether the AI was wrong is read from the known outcome, compared with the recommendation
    # as `followed_ai` is (trimmed and case-folded, in Python: SQLite's lower() folds ASCII only),
    # whatever the record's category (docs/reference/oversight.md): the decisions are grouped by
    # reviewer, quickness, followed flag, recommendation and outcome, and the groups compared.
    reliance_sql = (
        "SELECT user_id, quick, followed_ai, ai_recommendation, outcome, COUNT(*) "  # noqa: S608
        f"FROM {marked('followed_ai, ai_recommendation, outcome', f'{timed_where} AND outcome IS NOT NULL')} "
        "GROUP BY user_id, quick, followed_ai, ai_recommendation, outcome"
    )
    decisions_sql = (
        f"SELECT user_id, SUM(n) FROM (SELECT user_id, COUNT(*) AS n FROM {_TABLE} WHERE {where} "  # noqa: S608
        f"GROUP BY user_id UNION ALL SELECT user_id, -COUNT(*) AS n FROM {_TABLE} "
        f"WHERE {where} AND probe_kind IS NOT NULL GROUP BY user_id) AS c GROUP BY user_id"
    )
    with _cursor() as cursor:
        cursor.execute(timed_sql, threshold_params + window_params)
        timed = {row[0]: row for row in cursor.fetchall()}
        cursor.execute(reliance_sql, threshold_params + window_params)
        reliance = _ai_wrong_counts(cursor.fetchall())
        cursor.execute(decisions_sql, window_params * 2)
        decisions = {row[0]: int(row[1]) for row in cursor.fetchall() if row[1]}
        if postgresql:
            medians = {user: row[2] for user, row in timed.items()}
        else:
            cursor.execute(_medians("user_id", timed_where), window_params)
            medians = {row[0]: row[2] for row in cursor.fetchall()}
    rows = []
    for user, total in decisions.items():
        row = timed.get(user) or (user, 0, None, 0, 0)
        wrong = reliance.get(user) or (user, 0, 0, 0, 0)
        median_value = medians.get(user)
        rows.append(
            UserReviewCounts(
                user_id=user,
                decisions=total,
                timed_decisions=int(row[1]),
                median_review_seconds=None if median_value is None else float(median_value),
                quick_decisions=int(row[3] or 0),
                quick_agreements=int(row[4] or 0),
                quick_ai_wrong=int(wrong[1] or 0),
                quick_followed_ai_wrong=int(wrong[2] or 0),
                considered_ai_wrong=int(wrong[3] or 0),
                considered_followed_ai_wrong=int(wrong[4] or 0),
            )
        )
    return rows


def probe_counts_by_user(
    customer_id: str,
    *,
    since: dt.datetime,
    until: dt.datetime,
    model_id: Narrow = None,
    user_id: Narrow = None,
) -> list[ProbeCounts]:
    """Per reviewer with at least one probe in the window: probes of each kind, caught
    (known_wrong, not followed), corrected (known_wrong, the reviewer's decision is the correct
    one) and false overrides (known_right, not followed). One grouped statement over the
    probes' partial index."""
    where, params = _window(customer_id, since, until, model_id=model_id, user_id=user_id)
    wrong, right = ProbeKind.KNOWN_WRONG.value, ProbeKind.KNOWN_RIGHT.value
    sql = (
        "SELECT user_id, COUNT(*), "  # noqa: S608
        "SUM(CASE WHEN probe_kind = %s THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN probe_kind = %s AND NOT followed_ai THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN probe_kind = %s AND probe_corrected THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN probe_kind = %s THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN probe_kind = %s AND NOT followed_ai THEN 1 ELSE 0 END) "
        f"FROM {_TABLE} WHERE {where} AND probe_kind IS NOT NULL GROUP BY user_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [wrong, wrong, wrong, right, right, *params])
        rows = cursor.fetchall()
    return [ProbeCounts(row[0], *(int(value or 0) for value in row[1:])) for row in rows]
