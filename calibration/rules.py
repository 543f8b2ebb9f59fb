"""The calibration rules (docs/reference/calibration.md) as the service applies them: the
settings, each decision's contribution to the daily aggregates and every figure computed from the
sums. The arithmetic itself is `audit.measures` (free of Django, shared with the offline report
check); the per-record category is part of the decision record (`audit.categories`). Names are
re-exported here for the calibration app and the apps above it.

A user's figures are sums over decisions, so they can be added across days, users and models
and subtracted when a late outcome moves a decision; nothing here needs the rows.
"""

from collections.abc import Mapping
from types import EllipsisType
from typing import TYPE_CHECKING

from audit import measures
from audit.categories import (
    CALIBRATED,
    MISCALIBRATED,
    OVERTRUSTING,
    RECORD_CATEGORIES,
    UNDERTRUSTING,
    UNSCORED,
    followed,
    norm,
    record_category,
    same,
    setting,
)
from audit.measures import (
    FLAGGED_CATEGORIES,
    FLOAT_FIELDS,
    INSUFFICIENT_DATA,
    NON_DISCRIMINATING,
    SUM_FIELDS,
    Clusters,
    Record,
    add_sums,
    contribution,
)

__all__ = [
    "CALIBRATED",
    "FLAGGED_CATEGORIES",
    "FLOAT_FIELDS",
    "INSUFFICIENT_DATA",
    "MISCALIBRATED",
    "NON_DISCRIMINATING",
    "OVERTRUSTING",
    "RECORD_CATEGORIES",
    "SUM_FIELDS",
    "UNDERTRUSTING",
    "UNSCORED",
    "Clusters",
    "Record",
    "add_sums",
    "contribution",
    "followed",
    "norm",
    "record_category",
    "same",
]

if TYPE_CHECKING:
    from audit.models import Decision

USER_CATEGORIES = [CALIBRATED, OVERTRUSTING, UNDERTRUSTING, NON_DISCRIMINATING, INSUFFICIENT_DATA]
RISK_LEVELS = ["low", "medium", "high", "insufficient_data"]


# The documented defaults (docs/reference/calibration.md, Settings): a chain that recorded no
# `settings_changed` entry of the thresholds was judged with these.
DEFAULT_THRESHOLDS = measures.Thresholds()


def thresholds() -> measures.Thresholds:
    """The settings of docs/reference/calibration.md, Settings."""
    return measures.Thresholds(
        overtrust=setting("CALIBRATION_OVERTRUST_THRESHOLD", 0.50),
        undertrust=setting("CALIBRATION_UNDERTRUST_THRESHOLD", 0.25),
        discrimination=setting("CALIBRATION_DISCRIMINATION_THRESHOLD", 0.25),
        min_scored=setting("CALIBRATION_MIN_DECISIONS", 10),
        risk_min_scored=setting("CALIBRATION_RISK_MIN_DECISIONS", 30),
        risk_high_gap=setting("CALIBRATION_RISK_HIGH_GAP", 0.10),
        risk_medium_gap=setting("CALIBRATION_RISK_MEDIUM_GAP", 0.05),
    )


def min_decisions() -> int:
    return thresholds().min_scored


def risk_min_decisions() -> int:
    return thresholds().risk_min_scored


def window_days() -> int:
    return setting("CALIBRATION_WINDOW_DAYS", 90)


def record_of(
    decision: "Decision", *, outcome: str | EllipsisType | None = ..., category: str | None = None
) -> Record:
    """A record from a Decision (optionally as it was before a late outcome)."""
    return Record(  # by position, in field order: a batch builds one or two per decision
        decision.ai_recommendation,
        decision.user_decision,
        decision.ai_confidence,
        decision.outcome if outcome is ... else outcome,
        decision.initial_decision,
        category or decision.calibration_category,
    )


def delta(new: Mapping[str, float], old: Mapping[str, float]) -> dict[str, float]:
    keys = set(new) | set(old)
    out = {k: new.get(k, 0) - old.get(k, 0) for k in keys}
    return {k: v for k, v in out.items() if v != 0}


def figures(
    sums: Mapping[str, float],
    *,
    pi: float | measures.OwnAccuracy | None = measures.OWN,
    over: Clusters | None = None,
    under: Clusters | None = None,
    skill: bool = True,
    th: measures.Thresholds | None = None,
    recalibrated: bool = False,
) -> measures.Figures:
    """Every figure of a user, an organisation or a period (docs/reference/calibration.md) from its
    summed aggregate columns; `pi` is the window's AI accuracy when the sums are a part of it.
    `th`: the settings read once by a caller that computes many users' figures."""
    return measures.figures(
        sums,
        th or thresholds(),
        pi=pi,
        over_clusters=over,
        under_clusters=under,
        skill=skill,
        recalibrated=recalibrated,
    )


def is_risk_user(figures: measures.RiskUser, th: measures.Thresholds | None = None) -> bool:
    return measures.is_risk_user(figures, th or thresholds())


# The sums `risk_user_figures` reads.
RISK_USER_FIELDS = (
    "n",
    "scored_n",
    "q_sum",
    "a_conf_sum",
    "oo_n",
    "ai_right_n",
    "outcome_n",
    "fwo_sum",
    "wo_sum",
    "wo_sq",
    "uwu_sum",
    "wu_sum",
    "wu_sq",
)


def risk_user_figures(sums: Mapping[str, float], th: measures.Thresholds) -> measures.RiskUser | None:
    """A user's figures as the risk-user list shows them (docs/reference/calibration.md, Risk users),
    or None when the user is not a risk user: what `is_risk_user(figures(sums))` judges, computed
    by the same functions as `figures` but without the figures the list does not show, so that an
    organisation's every reviewer is judged at a fraction of the cost. It reads only the sums
    named in RISK_USER_FIELDS."""
    scored = int(sums["scored_n"])
    if scored < th.risk_min_scored:
        return None
    score = measures.scores(sums, measures.accuracy(sums))
    over = measures.Rate(*measures.weighted_rate(sums["fwo_sum"], sums["wo_sum"], sums["wo_sq"]))
    under = measures.Rate(*measures.weighted_rate(sums["uwu_sum"], sums["wu_sum"], sums["wu_sq"]))
    category = measures.category(scored, over, under, th)
    level = measures.risk_level(scored, score["reliance_gap"], category, th)
    if level != "high" and category not in FLAGGED_CATEGORIES:
        return None
    return {
        "trust_score": score["trust_score"],
        "reliance_gap": score["reliance_gap"],
        "risk_level": level,
        "decisions": int(sums["n"]),
        "scored_decisions": scored,
        "category": category,
        "overtrust_rate": over.rate,
        "overtrust_rate_ci": over.ci,
        "undertrust_rate": under.rate,
        "undertrust_rate_ci": under.ci,
    }
