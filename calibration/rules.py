"""The arithmetic of the calibration figures (docs/reference/calibration.md), free of the
database: each record's contribution to the daily aggregates and every per-user figure
computed from the sums. The per-record category is part of the decision record
(`audit.categories`); its names are re-exported here.

A user's figures are sums over decisions, so they can be added across days, users and
models and subtracted when a late outcome moves a decision; nothing here needs the rows.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audit.categories import (
    CALIBRATED,
    MISCALIBRATED,
    OVERTRUSTING,
    RECORD_CATEGORIES,
    UNDERTRUSTING,
    followed,
    high_confidence,
    low_confidence,
    norm,
    record_category,
    same,
    setting,
)

__all__ = [
    "CALIBRATED",
    "MISCALIBRATED",
    "OVERTRUSTING",
    "RECORD_CATEGORIES",
    "UNDERTRUSTING",
    "followed",
    "high_confidence",
    "low_confidence",
    "norm",
    "record_category",
    "same",
]

if TYPE_CHECKING:
    from audit.models import Decision

INSUFFICIENT_DATA = "INSUFFICIENT_DATA"
USER_CATEGORIES = [CALIBRATED, OVERTRUSTING, UNDERTRUSTING, INSUFFICIENT_DATA]
RISK_LEVELS = ["low", "medium", "high"]

BIN_COUNT = 5  # [0, 0.2), [0.2, 0.4), [0.4, 0.6), [0.6, 0.8), [0.8, 1.0]


def gap_threshold() -> float:
    return setting("CALIBRATION_GAP_THRESHOLD", 0.15)


def min_decisions() -> int:
    return setting("CALIBRATION_MIN_DECISIONS", 10)


def risk_high_below() -> float:
    return setting("CALIBRATION_RISK_HIGH_BELOW", 0.6)


def risk_medium_below() -> float:
    return setting("CALIBRATION_RISK_MEDIUM_BELOW", 0.8)


def risk_user_min_decisions() -> int:
    return setting("CALIBRATION_RISK_USER_MIN_DECISIONS", 20)


def is_risk_user(figures: Mapping[str, Any]) -> bool:
    """A risk user (docs/reference/calibration.md, Risk users): at least risk_user_min_decisions decisions
    and a trust score under the high-risk bound."""
    score = figures.get("trust_score")
    return (
        score is not None
        and int(figures.get("decisions") or 0) >= risk_user_min_decisions()
        and score < risk_high_below()
    )


def window_days() -> int:
    return setting("CALIBRATION_WINDOW_DAYS", 90)


def confidence_bin(confidence: float) -> int:
    """Five bins by confidence; 1.0 belongs to the last, [0.8, 1.0]."""
    return min(BIN_COUNT - 1, max(0, int(confidence * BIN_COUNT)))


# Every column of the daily aggregate. Integers unless named in FLOAT_FIELDS.
BIN_FIELDS = [f"b{b}_{part}" for b in range(BIN_COUNT) for part in ("n", "followed", "conf")]
SUM_FIELDS = [
    "n",  # decisions
    "followed",  # followed_ai
    "overtrust",  # records categorised OVERTRUSTING
    "undertrust",  # records categorised UNDERTRUSTING
    "conf_n",  # decisions with a confidence
    "conf_sum",  # their confidence sum (mean_ai_confidence)
    "outcome_n",  # |O|: decisions with a known outcome
    "ai_right_n",  # of O: the AI was right
    "ar_num",  # of O: followed == AI right (appropriate reliance)
    "followed_wrong",  # of O: followed and the AI was wrong (over-reliance numerator)
    "overrode_right",  # of O: overrode and the AI was right (under-reliance numerator)
    "gap_sum",  # sum(followed - expected) over O and C
    *BIN_FIELDS,  # C (no outcome, a confidence): per bin n_b, followed, confidence sum
    "sw_den",  # initial and outcome known, initial != AI
    "sw_num",  # ... and the final decision is the AI's
    "rair_den",  # initial wrong and AI right
    "rair_num",  # ... and the final decision is the AI's
    "rsr_den",  # initial right and AI wrong
    "rsr_num",  # ... and the final decision kept the initial one
]
FLOAT_FIELDS = {"conf_sum", "gap_sum", *(f"b{b}_conf" for b in range(BIN_COUNT))}


@dataclass(frozen=True)
class Record:
    ai_recommendation: str
    user_decision: str
    confidence: float | None
    outcome: str | None
    initial_decision: str | None
    category: str

    @classmethod
    def of(cls, decision: "Decision", *, outcome: Any = ..., category: str | None = None) -> "Record":
        """A record from a Decision (optionally as it was before a late outcome)."""
        return cls(
            ai_recommendation=decision.ai_recommendation,
            user_decision=decision.user_decision,
            confidence=decision.ai_confidence,
            outcome=decision.outcome if outcome is ... else outcome,
            initial_decision=decision.initial_decision,
            category=category or decision.calibration_category,
        )


def contribution(record: Record) -> dict[str, float]:
    """What one decision adds to its day's aggregate row (only the non-zero columns)."""
    did_follow = followed(record.ai_recommendation, record.user_decision)
    c: dict[str, float] = {"n": 1}
    if did_follow:
        c["followed"] = 1
    if record.category == OVERTRUSTING:
        c["overtrust"] = 1
    elif record.category == UNDERTRUSTING:
        c["undertrust"] = 1
    if record.confidence is not None:
        c["conf_n"] = 1
        c["conf_sum"] = record.confidence
    if record.outcome is not None:
        ai_right = same(record.outcome, record.ai_recommendation)
        c["outcome_n"] = 1
        c["gap_sum"] = int(did_follow) - int(ai_right)
        if ai_right:
            c["ai_right_n"] = 1
        if did_follow == ai_right:
            c["ar_num"] = 1
        if did_follow and not ai_right:
            c["followed_wrong"] = 1
        if not did_follow and ai_right:
            c["overrode_right"] = 1
        if record.initial_decision is not None:
            initial_is_ai = same(record.initial_decision, record.ai_recommendation)
            initial_right = same(record.initial_decision, record.outcome)
            final_is_ai = did_follow
            if not initial_is_ai:
                c["sw_den"] = 1
                if final_is_ai:
                    c["sw_num"] = 1
            if not initial_right and ai_right:
                c["rair_den"] = 1
                if final_is_ai:
                    c["rair_num"] = 1
            if initial_right and not ai_right:
                c["rsr_den"] = 1
                if same(record.user_decision, record.initial_decision):
                    c["rsr_num"] = 1
    elif record.confidence is not None:
        b = confidence_bin(record.confidence)
        c[f"b{b}_n"] = 1
        c[f"b{b}_conf"] = record.confidence
        c["gap_sum"] = int(did_follow) - record.confidence
        if did_follow:
            c[f"b{b}_followed"] = 1
    return c


def delta(new: Mapping[str, float], old: Mapping[str, float]) -> dict[str, float]:
    keys = set(new) | set(old)
    out = {k: new.get(k, 0) - old.get(k, 0) for k in keys}
    return {k: v for k, v in out.items() if v != 0}


def add_sums(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = dict.fromkeys(SUM_FIELDS, 0)
    for row in rows:
        for name in SUM_FIELDS:
            totals[name] += row.get(name) or 0
    return totals


def _ratio(num: float, den: float) -> float | None:
    return None if not den else num / den


def scored(sums: Mapping[str, float]) -> int:
    """|O| + |C|: decisions with an outcome or a confidence."""
    return int(sums["outcome_n"] + sum(sums[f"b{b}_n"] for b in range(BIN_COUNT)))


def trust_numerator(sums: Mapping[str, float]) -> float:
    """|O| * AR + |C| * (1 - RCE) = ar_num + |C| - sum_b |followed_b - conf_sum_b|."""
    c_total = sum(sums[f"b{b}_n"] for b in range(BIN_COUNT))
    error = sum(abs(sums[f"b{b}_followed"] - sums[f"b{b}_conf"]) for b in range(BIN_COUNT))
    return sums["ar_num"] + c_total - error


def trust_score(sums: Mapping[str, float]) -> float | None:
    n = scored(sums)
    return None if not n else min(1.0, max(0.0, trust_numerator(sums) / n))


def user_category(decisions: int, gap: float | None) -> str:
    if decisions < min_decisions():
        return INSUFFICIENT_DATA
    if gap is not None and gap > gap_threshold():
        return OVERTRUSTING
    if gap is not None and gap < -gap_threshold():
        return UNDERTRUSTING
    return CALIBRATED


def risk_level(score: float | None) -> str:
    if score is None:
        return "low"
    if score < risk_high_below():
        return "high"
    if score < risk_medium_below():
        return "medium"
    return "low"


def r6(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def figures(sums: Mapping[str, float]) -> dict[str, Any]:
    """Every per-user figure (docs/reference/calibration.md) from the summed aggregate columns."""
    n = int(sums["n"])
    gap = _ratio(sums["gap_sum"], scored(sums))
    score = trust_score(sums)
    wrong = sums["outcome_n"] - sums["ai_right_n"]
    return {
        "decisions": n,
        "agreement_rate": r6(_ratio(sums["followed"], n)),
        "override_rate": r6(_ratio(n - sums["followed"], n)),
        "mean_ai_confidence": r6(_ratio(sums["conf_sum"], sums["conf_n"])),
        "overtrust_rate": r6(_ratio(sums["overtrust"], n)),
        "undertrust_rate": r6(_ratio(sums["undertrust"], n)),
        "calibration_gap": r6(gap),
        "trust_score": r6(score),
        "category": user_category(n, gap),
        "risk_level": risk_level(score),
        "scored_decisions": scored(sums),
        "outcomes_known": int(sums["outcome_n"]),
        "overreliance_rate": r6(_ratio(sums["followed_wrong"], wrong)),
        "underreliance_rate": r6(_ratio(sums["overrode_right"], sums["ai_right_n"])),
        "switch_rate": r6(_ratio(sums["sw_num"], sums["sw_den"])),
        "rair": r6(_ratio(sums["rair_num"], sums["rair_den"])),
        "rsr": r6(_ratio(sums["rsr_num"], sums["rsr_den"])),
    }


def least_squares_slope(values: list[tuple[int, float]]) -> float:
    """Slope of y over x (x = period index); 0 with fewer than two points."""
    if len(values) < 2:
        return 0.0
    mean_x = sum(x for x, _ in values) / len(values)
    mean_y = sum(y for _, y in values) / len(values)
    den = sum((x - mean_x) ** 2 for x, _ in values)
    if not den:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in values) / den


def trend_direction(slope: float) -> str:
    stable = setting("CALIBRATION_TREND_STABLE_SLOPE", 0.005)
    if slope > stable:
        return "improving"
    if slope < -stable:
        return "declining"
    return "stable"
