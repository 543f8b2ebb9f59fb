"""The subgroup statistics of many decisions at once (docs/architecture.md, "The set-wise batch
path"): the decision pipeline's bias contributor keeps one staged change per decision state it
counts (+1) or uncounts (-1, a late outcome moving it) and writes them in one of two ways
behind the same plan.

- Few changes (a POST /log), or another database: folded per statistics key in Python
  (bias.stats.Deltas) and written by one additive upsert.
- Many changes on PostgreSQL: one row per change and attribute, with the values Python
  normalises (trimmed and case-folded as Python folds case, the correctness, the stake weights
  rounded half to even), sent as one array per column with the one INSERT ... SELECT that
  groups them per key, computes each key's SHA-256 `key_hash` as StatKey.digest does and
  adds the sums to the stored rows. The columns are integers, so the order of the additions cannot matter."""

from collections.abc import Sequence
from typing import NamedTuple

from bias.models import SubgroupDailyStat
from bias.stats import _ADDED, _STAT_VALUES, DecisionState, Deltas
from config.db import bulk
from config.sqlparams import SQLValue


class Staged(NamedTuple):
    state: DecisionState
    attributes: dict[str, str]
    sign: int


_DIMENSIONS = [
    ("day", "date"),
    ("model_id", "text"),
    ("model_version", "text"),
    ("attribute", "text"),
    ("group_value", "text"),
    ("ai_value", "text"),
    ("human_value", "text"),
    ("category", "text"),
    ("human_correct", "smallint"),
    ("ai_correct", "smallint"),
]
STAGING_COLUMNS = [("sign", "integer"), *_DIMENSIONS, *((name, "bigint") for name in _ADDED)]

_NAMES = [name for name, _ in _DIMENSIONS]
# StatKey.digest: the dimensions' text joined by U+001F, the day as ISO 8601.
_DIGEST = (
    "encode(sha256(convert_to(concat_ws(chr(31), to_char(day, 'YYYY-MM-DD'), "
    + ", ".join(f"{name}::text" for name in _NAMES[1:])
    + "), 'UTF8')), 'hex')"
)
_SUMS = [f"sum(sign * {name})" for name in _ADDED]
_SELECT = f"""
SELECT %s, {_DIGEST} AS key_hash, {", ".join(_NAMES)}, {", ".join(_SUMS)}
FROM staged
GROUP BY {", ".join(_NAMES)}
HAVING {" OR ".join(f"{total} <> 0" for total in _SUMS)}
ORDER BY {_DIGEST} COLLATE "C"
"""  # noqa: S608 (column names from this module)
assert tuple(_NAMES) + tuple(_ADDED) == _STAT_VALUES


def _rows(changes: Sequence[Staged]) -> list[tuple[SQLValue, ...]]:
    rows: list[tuple[SQLValue, ...]] = []
    for change in changes:
        s = change.state
        counts = (
            1,
            0 if s.confidence_micros is None else 1,
            s.confidence_micros or 0,
            *s.weights,
        )
        dimensions = (s.day, s.model_id, s.model_version)
        values = (s.ai_value, s.human_value, s.category, s.human_correct, s.ai_correct)
        for attribute, group in change.attributes.items():
            rows.append((change.sign, *dimensions, attribute, group, *values, *counts))
    return rows


def staged_apply(*, customer_id: str, changes: Sequence[Staged]) -> None:
    """Add the changes to the stored statistics rows in one INSERT ... SELECT."""
    bulk.staged_upsert(
        SubgroupDailyStat,
        columns=STAGING_COLUMNS,
        rows=_rows(changes),
        key=("customer_id", "key_hash"),
        values=_STAT_VALUES,
        add=_ADDED,
        select=_SELECT,
        params=[customer_id],
    )


def folded(changes: Sequence[Staged]) -> Deltas:
    deltas = Deltas()
    for change in changes:
        deltas.add(change.state, change.attributes, change.sign)
    return deltas
