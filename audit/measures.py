"""The arithmetic of the calibration measures (docs/reference/calibration.md), free of Django and
the database, so that the service and the offline report check (`audit/offline_report.py`, which
runs on an export alone) compute every figure with the same code.

Each decision adds a fixed set of numbers to its day's aggregate (`contribution`, the columns of
docs/architecture.md, Calibration aggregates); every figure of a user, a model, an organisation
or a trend point is a ratio of those sums (`figures`). Two figures need more than the sums: the
organisation's clustered effective n (`Clusters`, sums over reviewers) and the confidence check
(`calibration.confidence`, a logistic fit over (confidence, outcome) pairs, likewise free of
Django)."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple

from audit.figures import Figures, RecordCategory, RiskLevel, RiskUser, Scores, TrustRates, UserCategory
from audit.measures_stats import (
    N_TOLERANCE,
    Z95,
    Clusters,
    Rate,
    Recalibrate,
    newcombe,
    trust_rates,
    weighted_rate,
    wilson,
)

# re-exported: the calibration app's names, and the figures' shapes (audit/figures.py)
__all__ = ["Z95", "Clusters", "Figures", "Rate", "RiskUser", "TrustRates", "weighted_rate", "wilson"]

CALIBRATED: Final = "CALIBRATED"
OVERTRUSTING: Final = "OVERTRUSTING"
UNDERTRUSTING: Final = "UNDERTRUSTING"
UNSCORED: Final = "UNSCORED"
INSUFFICIENT_DATA: Final = "INSUFFICIENT_DATA"
NON_DISCRIMINATING: Final = "NON_DISCRIMINATING"
FLAGGED_CATEGORIES = (OVERTRUSTING, UNDERTRUSTING, NON_DISCRIMINATING)

# The daily aggregate's columns (docs/architecture.md, Calibration aggregates); ints but FLOAT_FIELDS.
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
    "oo_followed_wrong",
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
) -> RecordCategory:
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


def contribution(record: Record, recalibrate: Recalibrate | None = None) -> dict[str, float]:
    """What one decision adds to its day's aggregate row (only the non-zero columns). Only a
    decision with a confidence carries stake weight and can be an automation-bias incident; one
    with an outcome alone still scores (q, a) and, followed where the AI was wrong, counts in
    `oo_followed_wrong`. `recalibrate`: the query's p' (the stored aggregates never use one):
    every confidence-based column then uses p' for c, and the incidents are judged with it."""
    f = int(same(record.ai_recommendation, record.user_decision))
    stated = record.confidence
    c = stated if stated is None or recalibrate is None else recalibrate(stated)
    out: dict[str, float] = {"n": 1}
    if f:
        out["followed"] = 1
    if c is not None:
        if recalibrate is not None:
            over, under = f and c < 0.5, not f and c > 0.5
        else:
            over, under = record.category == OVERTRUSTING, record.category == UNDERTRUSTING
        out["overtrust"], out["undertrust"] = int(over), int(under)
    if stated is not None and c is not None:
        out["conf_n"] = 1
        out["conf_sum"] = stated
        out["a_conf_sum"] = max(c, 1 - c)
    y: int | None = None
    if record.outcome is not None:
        y = int(same(record.outcome, record.ai_recommendation))
        out["outcome_n"] = 1
        out["ai_right_n"] = y
        out["followed_wrong"] = f * (1 - y)
        out["overrode_right"] = (1 - f) * y
        if stated is None:
            out["oo_n"] = 1
            out["oo_followed_wrong"] = f * (1 - y)
        else:
            out["cy_n"] = 1
            out["brier_sum"] = (stated - y) ** 2
        out.update(_reliance(record, f=f, y=y))
    if c is None and y is None:
        return _nonzero(out)
    p = c if c is not None else float(y or 0)
    wo, wu = (max(0.0, 1 - 2 * c), max(0.0, 2 * c - 1)) if c is not None else (0.0, 0.0)
    out["gap_sum"] = f - (y if y is not None else (stated if stated is not None else p))
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


def add_sums(rows: Iterable[Mapping[str, float | None]]) -> dict[str, float]:
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
    discrimination: float = 0.25
    min_scored: int = 10
    reviewer_flag_n: float = 5
    organisation_flag_n: float = 10
    discrimination_n: float = 10
    risk_min_scored: int = 30
    risk_high_gap: float = 0.10
    risk_medium_gap: float = 0.05
    skill_min_span: float = 0.02


def discrimination(over: Rate, under: Rate, th: Thresholds) -> tuple[float | None, list[float] | None]:
    """Delta = (1 - undertrust_rate) - overtrust_rate (Youden's J of following as a test of the
    advice) and Newcombe's hybrid score interval from the two rates' intervals; the interval is
    null with either effective n under `discrimination_n`, Delta with either rate null."""
    if over.rate is None or under.rate is None:
        return None, None
    follow = 1 - under.rate
    delta, ci = newcombe(follow, [1 - under.ci[1], 1 - under.ci[0]], over.rate, over.ci)
    floor = th.discrimination_n - N_TOLERANCE
    if over.effective_n < floor or under.effective_n < floor:
        return delta, None
    return delta, ci


def category(
    scored: int, over: Rate, under: Rate, th: Thresholds, *, organisation: bool = False
) -> UserCategory:
    """Category of a user or an organisation (docs/reference/calibration.md, "Category of a user or
    an organisation"): a flag needs its effective n at the floor (a reviewer's 5, an
    organisation's 10) and its interval's lower bound above its threshold; NON_DISCRIMINATING
    when Delta's upper bound is under theta_Delta or both flags hold."""
    if scored < th.min_scored:
        return INSUFFICIENT_DATA
    floor = (th.organisation_flag_n if organisation else th.reviewer_flag_n) - N_TOLERANCE
    over_flag = over.effective_n >= floor and over.ci[0] > th.overtrust
    under_flag = under.effective_n >= floor and under.ci[0] > th.undertrust
    _, delta_ci = discrimination(over, under, th)
    if (over_flag and under_flag) or (delta_ci is not None and delta_ci[1] < th.discrimination):
        return NON_DISCRIMINATING
    if over_flag:
        return OVERTRUSTING
    if under_flag:
        return UNDERTRUSTING
    if over.ci[1] < th.overtrust and under.ci[1] < th.undertrust:
        return CALIBRATED
    return INSUFFICIENT_DATA


def risk_level(scored: int, gap: float | None, cat: str, th: Thresholds) -> RiskLevel:
    if scored < th.risk_min_scored or gap is None:
        return "insufficient_data"
    if gap >= th.risk_high_gap:
        return "high"
    if gap >= th.risk_medium_gap or cat in FLAGGED_CATEGORIES:
        return "medium"
    return "low"


def is_risk_user(figures: RiskUser, th: Thresholds) -> bool:
    """A risk user: enough scored decisions, and a high risk level or a flagged category."""
    return figures["scored_decisions"] >= th.risk_min_scored and (
        figures["risk_level"] == "high" or figures["category"] in FLAGGED_CATEGORIES
    )


def accuracy(sums: Mapping[str, float]) -> float | None:
    """pi: the AI's accuracy over the outcome-known decisions of the window."""
    return ratio(sums["ai_right_n"], sums["outcome_n"])


def scores(sums: Mapping[str, float], pi: float | None) -> Scores:
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


def figures(
    sums: Mapping[str, float],
    th: Thresholds,
    *,
    pi: "float | OwnAccuracy | None" = OWN,
    over_clusters: Clusters | None = None,
    under_clusters: Clusters | None = None,
    skill: bool = True,
    recalibrated: bool = False,
) -> Figures:
    """Every figure of a user or an organisation from its summed columns. `pi` defaults to the
    accuracy of these sums (pass the window's for a part of it, such as a trend point). With
    clusters the figures are an organisation's (its intervals and flag floor). `recalibrated`:
    the sums were taken with the query's p' (`contribution(record, recalibrate)`)."""
    n, scored = int(sums["n"]), int(sums["scored_n"])
    window_pi = accuracy(sums) if isinstance(pi, OwnAccuracy) else pi
    score = scores(sums, window_pi)
    over = Rate(*weighted_rate(sums["fwo_sum"], sums["wo_sum"], sums["wo_sq"], over_clusters))
    under = Rate(*weighted_rate(sums["uwu_sum"], sums["wu_sum"], sums["wu_sq"], under_clusters))
    delta, delta_ci = discrimination(over, under, th)
    organisation = over_clusters is not None or under_clusters is not None
    cat = category(scored, over, under, th, organisation=organisation)
    wrong = sums["outcome_n"] - sums["ai_right_n"]
    out: Figures = {
        "decisions": n,
        "scored_decisions": scored,
        "unscored_decisions": n - scored,
        "confidence_decisions": int(sums["conf_n"]),
        "coverage": ratio(scored, n),
        "agreement_rate": ratio(sums["followed"], n),
        "override_rate": ratio(n - sums["followed"], n),
        "mean_ai_confidence": ratio(sums["conf_sum"], sums["conf_n"]),
        "calibration_gap": ratio(sums["gap_sum"], scored),
        "trust_score": score["trust_score"],
        "attainable_score": score["attainable_score"],
        "reliance_gap": score["reliance_gap"],
        "reliance_skill": reliance_skill(sums, score["trust_score"], score["attainable_score"], th),
        **trust_rates(over, under),
        "discrimination": delta,
        "discrimination_ci": delta_ci,
        "category": cat,
        "risk_level": risk_level(scored, score["reliance_gap"], cat, th),
        "outcomes_known": int(sums["outcome_n"]),
        "ai_accuracy": window_pi,
        "overreliance_rate": ratio(sums["followed_wrong"], wrong),
        "underreliance_rate": ratio(sums["overrode_right"], sums["ai_right_n"]),
        "switch_rate": ratio(sums["sw_num"], sums["sw_den"]),
        "rair": ratio(sums["rair_num"], sums["rair_den"]),
        "rsr": ratio(sums["rsr_num"], sums["rsr_den"]),
        "automation_bias_incidents": int(sums["overtrust"]),
        "automation_bias_rate": ratio(sums["overtrust"], scored),
        "followed_ai_errors": int(sums["oo_followed_wrong"]),
        "confidence_recalibrated": recalibrated,
    }
    if not skill:
        del out["reliance_skill"]  # a trend point's figures (a part of its window) have no skill
    return out
