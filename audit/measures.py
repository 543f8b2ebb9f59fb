"""The arithmetic of the calibration measures (docs/reference/calibration.md), free of Django and
the database, so that the service and the offline report check (`audit/offline_report.py`, which
runs on an export alone) compute every figure with the same code.

Each decision adds a fixed set of numbers to its day's aggregate (`contribution`, the columns of
docs/architecture.md, Calibration aggregates); every figure of a user, a model, an organisation
or a trend point is a ratio of those sums (`figures`). Two figures need more than the sums: the
organisation's clustered effective n (`Clusters`, sums over reviewers) and the confidence check
(`calibration.confidence`, a logistic fit over (confidence, outcome) pairs, likewise free of
Django).
"""

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, NamedTuple

Z95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054, the two-sided 95 % normal quantile

CALIBRATED = "CALIBRATED"
OVERTRUSTING = "OVERTRUSTING"
UNDERTRUSTING = "UNDERTRUSTING"
UNSCORED = "UNSCORED"
INSUFFICIENT_DATA = "INSUFFICIENT_DATA"
NON_DISCRIMINATING = "NON_DISCRIMINATING"
FLAGGED_CATEGORIES = (OVERTRUSTING, UNDERTRUSTING, NON_DISCRIMINATING)

# The columns of the daily aggregate (docs/architecture.md, Calibration aggregates). Integers
# unless named in FLOAT_FIELDS.
SUM_FIELDS = [
    "n",
    "followed",
    "overtrust",
    "undertrust",
    "conf_n",
    "conf_sum",
    "outcome_n",
    "ai_right_n",
    "followed_wrong",
    "overrode_right",
    "gap_sum",
    "scored_n",
    "scored_followed",
    "p_sum",
    "q_sum",
    "a_conf_sum",
    "oo_n",
    "wo_sum",
    "wo_sq",
    "fwo_sum",
    "wu_sum",
    "wu_sq",
    "uwu_sum",
    "cy_n",
    "brier_sum",
    "sw_den",
    "sw_num",
    "rair_den",
    "rair_num",
    "rsr_den",
    "rsr_num",
]
FLOAT_FIELDS = {
    "conf_sum",
    "gap_sum",
    "p_sum",
    "q_sum",
    "a_conf_sum",
    "wo_sum",
    "wo_sq",
    "fwo_sum",
    "wu_sum",
    "wu_sq",
    "uwu_sum",
    "brier_sum",
}


def norm(value: str | None) -> str | None:
    """Decisions compare after trimming and case-folding (docs/reference/calibration.md, Comparing
    decisions)."""
    return None if value is None else value.strip().casefold()


def same(a: str | None, b: str | None) -> bool:
    """norm(a) == norm(b) for two values given (inline: a batch compares several per item)."""
    return a is not None and b is not None and a.strip().casefold() == b.strip().casefold()


def record_category(
    *,
    ai_recommendation: str,
    user_decision: str,
    confidence: float | None,
    outcome: str | None,
    probe: bool = False,
    followed: bool | None = None,
) -> str:
    """Category of a decision (docs/reference/calibration.md): the confidence judges the act when it was
    taken; without one a known outcome decides; with neither the record is UNSCORED. A vigilance
    probe's known truth (its outcome) always decides. `followed`: same(ai_recommendation,
    user_decision) when the caller has it (a new decision's row holds it too)."""
    did_follow = same(ai_recommendation, user_decision) if followed is None else followed
    if confidence is not None and not probe:
        if did_follow and confidence < 0.5:
            return OVERTRUSTING
        if not did_follow and confidence > 0.5:
            return UNDERTRUSTING
        return CALIBRATED
    if outcome is not None:
        ai_right = same(outcome, ai_recommendation)
        if did_follow and not ai_right:
            return OVERTRUSTING
        if not did_follow and ai_right:
            return UNDERTRUSTING
        return CALIBRATED
    return UNSCORED


class Record(NamedTuple):
    """One decision as the measures read it (a tuple: a batch builds one or two per item, and
    a frozen dataclass's __init__ cost several times a tuple's)."""

    ai_recommendation: str
    user_decision: str
    confidence: float | None
    outcome: str | None
    initial_decision: str | None
    category: str


def contribution(record: Record) -> dict[str, float]:
    """What one decision adds to its day's aggregate row (only the non-zero columns)."""
    f = int(same(record.ai_recommendation, record.user_decision))
    c = record.confidence
    out: dict[str, float] = {"n": 1}
    if f:
        out["followed"] = 1
    if record.category == OVERTRUSTING:
        out["overtrust"] = 1
    elif record.category == UNDERTRUSTING:
        out["undertrust"] = 1
    if c is not None:
        out["conf_n"] = 1
        out["conf_sum"] = c
        out["a_conf_sum"] = max(c, 1 - c)
    y: int | None = None
    if record.outcome is not None:
        y = int(same(record.outcome, record.ai_recommendation))
        out["outcome_n"] = 1
        out["ai_right_n"] = y
        out["followed_wrong"] = f * (1 - y)
        out["overrode_right"] = (1 - f) * y
        if c is None:
            out["oo_n"] = 1
        else:
            out["cy_n"] = 1
            out["brier_sum"] = (c - y) ** 2
        out.update(_reliance(record, f=f, y=y))
    if c is None and y is None:
        return _nonzero(out)
    p = c if c is not None else float(y or 0)
    wo, wu = max(0.0, 1 - 2 * p), max(0.0, 2 * p - 1)
    out["gap_sum"] = f - (y if y is not None else p)
    out["scored_n"] = 1
    out["scored_followed"] = f
    out["p_sum"] = p
    out["q_sum"] = float(f == y) if y is not None else f * p + (1 - f) * (1 - p)
    out.update(wo_sum=wo, wo_sq=wo * wo, fwo_sum=f * wo, wu_sum=wu, wu_sq=wu * wu, uwu_sum=(1 - f) * wu)
    return _nonzero(out)


def _reliance(record: Record, *, f: int, y: int) -> dict[str, float]:
    """Switch, RAIR and RSR counts (docs/reference/calibration.md, Appropriate reliance)."""
    if record.initial_decision is None:
        return {}
    out: dict[str, float] = {}
    initial_is_ai = same(record.initial_decision, record.ai_recommendation)
    initial_right = same(record.initial_decision, record.outcome)
    if not initial_is_ai:
        out["sw_den"] = 1
        out["sw_num"] = f
    if not initial_right and y:
        out["rair_den"] = 1
        out["rair_num"] = f
    if initial_right and not y:
        out["rsr_den"] = 1
        out["rsr_num"] = int(same(record.user_decision, record.initial_decision))
    return out


def _nonzero(values: Mapping[str, float]) -> dict[str, float]:
    return {k: v for k, v in values.items() if v}


# Any: aggregate rows by column name, as the database returns them
def add_sums(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    totals: dict[str, float] = dict.fromkeys(SUM_FIELDS, 0)
    for row in rows:
        for name in SUM_FIELDS:
            totals[name] += row.get(name) or 0
    return totals


def ratio(num: float, den: float) -> float | None:
    return None if not den else num / den


# --- the figures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The settings of docs/reference/calibration.md, Settings, with their defaults."""

    overtrust: float = 0.50
    undertrust: float = 0.25
    min_scored: int = 10
    risk_min_scored: int = 30
    risk_high_gap: float = 0.10
    risk_medium_gap: float = 0.05
    skill_min_span: float = 0.02


@dataclass(frozen=True)
class Clusters:
    """Over the reviewers j of a window, for one rate: k = reviewers with weight (D_j > 0),
    nn = sum N_j^2, nd = sum N_j D_j, dd = sum D_j^2, with N_j the reviewer's weighted
    numerator and D_j their weight sum."""

    k: int
    nn: float
    nd: float
    dd: float

    @classmethod
    def of(cls, pairs: Iterable[tuple[float, float]]) -> "Clusters":
        k, nn, nd, dd = 0, 0.0, 0.0, 0.0
        for num, den in pairs:
            if den > 0:
                k += 1
                nn, nd, dd = nn + num * num, nd + num * den, dd + den * den
        return cls(k, nn, nd, dd)


def wilson(rate: float, n: float, z: float = Z95) -> list[float]:
    """The Wilson (1927) score interval of a rate at (effective) sample size n; [0, 1] at n = 0."""
    if n <= 0:
        return [0.0, 1.0]
    z2 = z * z
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(max(0.0, rate * (1 - rate)) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def weighted_rate(
    num: float, den: float, sq: float, clusters: Clusters | None = None
) -> tuple[float | None, float, list[float]]:
    """(rate, effective n, 95 % interval) of a stake-weighted rate: Kish's effective n
    (sum w)^2 / sum w^2, for several reviewers the smaller of it and r(1 - r) / v with v the
    ratio estimator's variance, reviewers as clusters."""
    if den <= 0:
        return None, 0.0, [0.0, 1.0]
    r = min(1.0, max(0.0, num / den))
    n_eff = den * den / sq if sq > 0 else 0.0
    if clusters is not None and clusters.k >= 2:
        spread = clusters.nn - 2 * r * clusters.nd + r * r * clusters.dd
        v = clusters.k / (clusters.k - 1) * max(0.0, spread) / (den * den)
        if v > 0:
            n_eff = min(n_eff, r * (1 - r) / v)
    return r, n_eff, wilson(r, n_eff)


def category(scored: int, over_ci: list[float], under_ci: list[float], th: Thresholds) -> str:
    """Category of a user or an organisation (docs/reference/calibration.md, "Category of a user or an organisation")."""
    if scored < th.min_scored:
        return INSUFFICIENT_DATA
    over, under = over_ci[0] > th.overtrust, under_ci[0] > th.undertrust
    if over and under:
        return NON_DISCRIMINATING
    if over:
        return OVERTRUSTING
    if under:
        return UNDERTRUSTING
    if over_ci[1] < th.overtrust and under_ci[1] < th.undertrust:
        return CALIBRATED
    return INSUFFICIENT_DATA


def risk_level(scored: int, gap: float | None, cat: str, th: Thresholds) -> str:
    if scored < th.risk_min_scored or gap is None:
        return "insufficient_data"
    if gap >= th.risk_high_gap:
        return "high"
    if gap >= th.risk_medium_gap or cat in FLAGGED_CATEGORIES:
        return "medium"
    return "low"


# Any: figures by name (counts, rates, intervals, labels), rendered as JSON
def is_risk_user(figures: Mapping[str, Any], th: Thresholds) -> bool:
    """A risk user: enough scored decisions, and a high risk level or a flagged category."""
    return int(figures.get("scored_decisions") or 0) >= th.risk_min_scored and (
        figures.get("risk_level") == "high" or figures.get("category") in FLAGGED_CATEGORIES
    )


def accuracy(sums: Mapping[str, float]) -> float | None:
    """pi: the AI's accuracy over the outcome-known decisions of the window."""
    return ratio(sums["ai_right_n"], sums["outcome_n"])


def scores(sums: Mapping[str, float], pi: float | None) -> dict[str, float | None]:
    """trust_score T, attainable_score A, reliance_gap R = A - T, with pi the window's accuracy."""
    n = sums["scored_n"]
    if not n:
        return {"trust_score": None, "attainable_score": None, "reliance_gap": None}
    top = max(pi, 1 - pi) if pi is not None else 0.0
    t = sums["q_sum"] / n
    a = (sums["a_conf_sum"] + sums["oo_n"] * top) / n
    return {"trust_score": t, "attainable_score": a, "reliance_gap": a - t}


def reliance_skill(
    sums: Mapping[str, float], t: float | None, a: float | None, th: Thresholds
) -> float | None:
    """K = (T - T_rand) / (A - T_rand), T_rand the score of following at the same rate at random."""
    n = sums["scored_n"]
    if not n or t is None or a is None:
        return None
    f, p = sums["scored_followed"] / n, sums["p_sum"] / n
    t_rand = f * p + (1 - f) * (1 - p)
    if a - t_rand < th.skill_min_span:
        return None
    return (t - t_rand) / (a - t_rand)


class OwnAccuracy:
    """The default of `figures(pi=...)`: the accuracy of the figures' own sums."""


OWN = OwnAccuracy()


# Any: figures by name (counts, rates, intervals, labels), rendered as JSON
def figures(
    sums: Mapping[str, float],
    th: Thresholds,
    *,
    pi: "float | OwnAccuracy | None" = OWN,
    over_clusters: Clusters | None = None,
    under_clusters: Clusters | None = None,
    skill: bool = True,
) -> dict[str, Any]:
    """Every figure of a user or an organisation from its summed columns. `pi` defaults to the
    accuracy of these sums (pass the window's for a part of it, such as a trend point)."""
    n, scored = int(sums["n"]), int(sums["scored_n"])
    window_pi = accuracy(sums) if isinstance(pi, OwnAccuracy) else pi
    out: dict[str, Any] = {
        "decisions": n,
        "scored_decisions": scored,
        "unscored_decisions": n - scored,
        "coverage": ratio(scored, n),
        "agreement_rate": ratio(sums["followed"], n),
        "override_rate": ratio(n - sums["followed"], n),
        "mean_ai_confidence": ratio(sums["conf_sum"], sums["conf_n"]),
        "calibration_gap": ratio(sums["gap_sum"], scored),
        **scores(sums, window_pi),
    }
    if skill:
        out["reliance_skill"] = reliance_skill(sums, out["trust_score"], out["attainable_score"], th)
    for name, num, den, sq, clusters in (
        ("overtrust", sums["fwo_sum"], sums["wo_sum"], sums["wo_sq"], over_clusters),
        ("undertrust", sums["uwu_sum"], sums["wu_sum"], sums["wu_sq"], under_clusters),
    ):
        rate, n_eff, ci = weighted_rate(num, den, sq, clusters)
        out[f"{name}_rate"] = rate
        out[f"{name}_effective_n"] = n_eff
        out[f"{name}_rate_ci"] = ci
    out["category"] = category(scored, out["overtrust_rate_ci"], out["undertrust_rate_ci"], th)
    out["risk_level"] = risk_level(scored, out["reliance_gap"], out["category"], th)
    wrong = sums["outcome_n"] - sums["ai_right_n"]
    out.update(
        {
            "outcomes_known": int(sums["outcome_n"]),
            "ai_accuracy": window_pi,
            "overreliance_rate": ratio(sums["followed_wrong"], wrong),
            "underreliance_rate": ratio(sums["overrode_right"], sums["ai_right_n"]),
            "switch_rate": ratio(sums["sw_num"], sums["sw_den"]),
            "rair": ratio(sums["rair_num"], sums["rair_den"]),
            "rsr": ratio(sums["rsr_num"], sums["rsr_den"]),
            "automation_bias_incidents": int(sums["overtrust"]),
            "automation_bias_rate": ratio(sums["overtrust"], scored),
        }
    )
    return out
