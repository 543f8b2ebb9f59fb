"""The per-user daily aggregates of many decisions at once (docs/architecture.md, "The set-wise
batch path"): the decision pipeline's calibration contributor keeps one staged change per
decision it counts (or two for a late outcome: the decision as it was, subtracted, and as it
is, added) and writes them in one of two ways behind the same plan.

- Few changes (a POST /log), or another database: each change's `rules.contribution`, the
  reference, folded per (user, model key, day) in Python and written by one additive upsert.
- Many changes on PostgreSQL: per change only the inputs Python alone can judge (whether the
  reviewer followed the AI and whether the AI was right, compared trimmed and case-folded as
  Python folds case; the category; the appropriate-reliance counts), sent as one array per
  column with the one INSERT ... SELECT that derives every column of docs/architecture.md,
  Calibration aggregates, in SQL (the same double-precision operations as `contribution`),
  sums them per row and adds them to the stored rows."""

import datetime as dt
from collections.abc import Sequence
from typing import NamedTuple

from calibration import rules
from calibration.models import ALL_MODELS, UserDailyAggregate
from config.db import bulk
from config.sqlparams import SQLValue


class Staged(NamedTuple):
    """One change to a user's day: the record as the change leaves the decision, and for a
    late outcome the record as it was before (its contribution is taken away)."""

    user_id: str
    model_id: str | None
    day: dt.date
    record: rules.Record
    previous: rules.Record | None = None

    def delta(self) -> dict[str, float]:
        """What the change adds, computed as the Python fold always has: a late outcome's
        new contribution less its old one, column by column, before it meets the row."""
        new = rules.contribution(self.record)
        return new if self.previous is None else rules.delta(new, rules.contribution(self.previous))


_RELIANCE = ("sw_den", "sw_num", "rair_den", "rair_num", "rsr_den", "rsr_num")
_INPUTS = [
    ("f", "integer"),
    ("c", "double precision"),
    ("y", "integer"),
    ("over", "integer"),
    ("under", "integer"),
    *((name, "integer") for name in _RELIANCE),
]

# One staged row per change: its place in the plan, its key, the inputs of the record as the change
# leaves the decision and, for a late outcome, those of the record before it (prefixed `was_`).
STAGING_COLUMNS = [
    ("ordinal", "integer"),
    ("user_id", "text"),
    ("model_id", "text"),
    ("day", "date"),
    ("moved", "boolean"),
    *_INPUTS,
    *((f"was_{name}", sql_type) for name, sql_type in _INPUTS),
]


def staged_rows(changes: Sequence[Staged]) -> list[tuple[SQLValue, ...]]:
    """The changes' staged rows, in plan order. A late outcome that changes no
    column (the fold skips its empty delta) has none."""
    blank = (None,) * len(_INPUTS)
    return [
        (
            ordinal,
            change.user_id,
            change.model_id or None,
            change.day,
            change.previous is not None,
            *_inputs(change.record),
            *(blank if change.previous is None else _inputs(change.previous)),
        )
        for ordinal, change in enumerate(changes)
        if change.previous is None or change.delta()
    ]


_NO_RELIANCE = (0,) * len(_RELIANCE)


def _inputs(record: rules.Record) -> tuple[float | None, ...]:
    """The inputs of `rules.contribution` that only Python compares exactly (the rest is
    arithmetic the database repeats)."""
    f = int(rules.same(record.ai_recommendation, record.user_decision))
    y = None if record.outcome is None else int(rules.same(record.outcome, record.ai_recommendation))
    counts = _NO_RELIANCE
    if y is not None and record.initial_decision is not None:
        reliance = rules.contribution(record)  # the rare decision with an initial decision
        counts = tuple(int(reliance.get(name, 0)) for name in _RELIANCE)
    category = record.category if record.confidence is not None else None  # incidents need a confidence
    return (
        f,
        record.confidence,
        y,
        int(category == rules.OVERTRUSTING),
        int(category == rules.UNDERTRUSTING),
        *counts,
    )


# Each column of the aggregates as `rules.contribution` computes it for one record ({p} is the
# confidence, else the outcome; NULL for an unscored decision; the stake weights {wo}, {wu} come
# from the confidence alone, NULL without one; an absent column adds 0).
# The arithmetic is the same double-precision operations in the same order (1 - 2 * p,
# f * p + (1 - f) * (1 - p), (c - y) ^ 2 by pow() as Python's ** 2), so a record adds exactly
# what it adds in Python.
_COLUMNS = {
    "n": "1",
    "followed": "{f}",
    "overtrust": "{over}",
    "undertrust": "{under}",
    "conf_n": "({c} IS NOT NULL)::int",
    "conf_sum": "coalesce({c}, 0)",
    "outcome_n": "({y} IS NOT NULL)::int",
    "ai_right_n": "coalesce({y}, 0)",
    "followed_wrong": "coalesce({f} * (1 - {y}), 0)",
    "overrode_right": "coalesce((1 - {f}) * {y}, 0)",
    "gap_sum": "coalesce({f} - coalesce({y}::float8, {p}), 0)",
    "scored_n": "({p} IS NOT NULL)::int",
    "scored_followed": "CASE WHEN {p} IS NULL THEN 0 ELSE {f} END",
    "p_sum": "coalesce({p}, 0)",
    "q_sum": "coalesce(CASE WHEN {y} IS NOT NULL THEN ({f} = {y})::int::float8 "
    "ELSE {f} * {p} + (1 - {f}) * (1 - {p}) END, 0)",
    "a_conf_sum": "coalesce(greatest({c}, 1 - {c}), 0)",
    "oo_n": "({y} IS NOT NULL AND {c} IS NULL)::int",
    "wo_sum": "coalesce({wo}, 0)",
    "wo_sq": "coalesce({wo} * {wo}, 0)",
    "fwo_sum": "coalesce({f} * {wo}, 0)",
    "wu_sum": "coalesce({wu}, 0)",
    "wu_sq": "coalesce({wu} * {wu}, 0)",
    "uwu_sum": "coalesce((1 - {f}) * {wu}, 0)",
    "cy_n": "({y} IS NOT NULL AND {c} IS NOT NULL)::int",
    "brier_sum": "coalesce(({c} - {y}) ^ 2, 0)",
    **{name: f"{{{name}}}" for name in _RELIANCE},
    "oo_followed_wrong": "coalesce(({c} IS NULL)::int * {f} * (1 - {y}), 0)",
}
assert set(_COLUMNS) == set(rules.SUM_FIELDS), "every aggregate column is derived"


def _expression(template: str, prefix: str) -> str:
    names = [name for name, _ in _INPUTS] + ["p", "wo", "wu"]
    return template.format(**{name: f"{prefix}{name}" for name in names})


# A change adds its record's contribution, or for a late outcome the new one less the old one,
# column by column (`rules.delta`). A row's sums are taken in plan order, as the Python fold
# adds them (a sum of doubles depends on its order: 1.6 against 1.5999999999999999 for five
# confidences): the changes are sorted once by row key and then `ordinal`, and the aggregation
# reads them in that order (PostgreSQL's aggregates add their input in the order it arrives; the
# group keys lead the sort, so no other sort comes between). A decision of a model named "*"
# adds to the all-models row twice, as in Python (`slot` orders the two). A window of running
# sums did the same and cost the server twice the time (a sum per change and column, and a
# second sort of every change to keep each row's last).
_DELTAS = ", ".join(
    f"CASE WHEN moved THEN ({_expression(t, '')}) - ({_expression(t, 'was_')}) ELSE {_expression(t, '')} END"
    f" AS {name}"
    for name, t in _COLUMNS.items()
)
_WEIGHTS = ", ".join(
    f"greatest(0, 1 - 2 * {prefix}c) AS {prefix}wo, greatest(0, 2 * {prefix}c - 1) AS {prefix}wu"
    for prefix in ("", "was_")
)
_SELECT = f"""
SELECT %s, user_id, model_key, day, {", ".join(f"sum({name})" for name in rules.SUM_FIELDS)}
FROM (
    SELECT user_id COLLATE "C" AS user_id, model_key COLLATE "C" AS model_key, day, {_DELTAS}
    FROM (
        SELECT p.*, {_WEIGHTS}
        FROM (SELECT staged.*, coalesce(c, y::float8) AS p, coalesce(was_c, was_y::float8) AS was_p FROM staged) AS p
    ) AS w
    CROSS JOIN LATERAL (VALUES (1, %s), (2, model_id)) AS k (slot, model_key)
    WHERE model_key IS NOT NULL
    ORDER BY 1, 2, 3, ordinal, slot
) AS changes
GROUP BY user_id, model_key, day
ORDER BY user_id, model_key, day
"""  # noqa: S608 (column expressions from this module)


def staged_apply(*, customer_id: str, changes: Sequence[Staged]) -> None:
    """Add the changes to the stored aggregate rows in one INSERT ... SELECT."""
    bulk.staged_upsert(
        UserDailyAggregate,
        columns=STAGING_COLUMNS,
        rows=staged_rows(changes),
        key=("customer_id", "user_id", "model_key", "day"),
        values=rules.SUM_FIELDS,
        select=_SELECT,
        params=[customer_id, ALL_MODELS],
    )
