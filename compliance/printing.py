"""How a report prints a figure (docs/reference/reports.md, "How figures are printed"): rates as
percentages with one decimal, counts with thousands separators, times in UTC with the zone named,
scores with two decimals, and an absent figure as "not measured" with the reason it is absent.
Nothing here returns a program's representation of a value (None, nan, a dict or a list)."""

import datetime as dt
import math
import re
from collections.abc import Sequence

from config.figures import p_value_text

NOT_MEASURED = "not measured"
# Why a figure can be absent, by its key (the calibration reference's denominators and the analyses' minimums).
REASONS = {
    "rair": "no decision recorded a wrong initial decision, a right AI and the outcome",
    "rsr": "no decision recorded a right initial decision, a wrong AI and the outcome",
    "switch_rate": "no decision recorded an initial decision that differed from the AI",
    "overreliance_rate": "no decision with a known outcome where the AI was wrong",
    "underreliance_rate": "no decision with a known outcome where the AI was right",
    "trust_score": "no decision with an outcome or an AI confidence",
    "attainable_score": "no decision with an outcome or an AI confidence",
    "reliance_gap": "no decision with an outcome or an AI confidence",
    "reliance_skill": "following at random would score within 0.02 of the attainable score",
    "overtrust_rate": "no scored decision where the AI was more likely wrong",
    "undertrust_rate": "no scored decision where the AI was more likely right",
    "coverage": "no decision in the period",
    "automation_bias_rate": "no decision with an outcome or an AI confidence",
    "calibration_gap": "no decision with an outcome or an AI confidence",
    "mean_ai_confidence": "no decision carries an AI confidence",
    "ai_confidence": "the decision carries no AI confidence",
    "accuracy": "no outcome is known for the group",
    "ai_accuracy": "no decision with a known outcome",
    "disparate_impact_ratio": "the reference group has no favourable decision",
    "impact_ratio": "the impact reference group has no favourable decision",
    "favorable_rate_difference": "the group is the reference group",
    "override_rate_difference": "the group is the reference group",
    "amplification_score": "a group had fewer than 30 correlated decisions",
    "outcome": "not known yet",
    "p_value": "the group is too small for the test",
}
# Absent values that are not a missing measurement.
ABSENT_WORDS = {
    "first_invalid_sequence": "none (every entry verified)",
    "first_invalid_checkpoint": "none",
    "resolution_notes": "none recorded",
    "notes": "none recorded",
    "by": "not recorded",
    "resolved_by": "not recorded",
    "model_version": "not recorded",
    "initial_decision": "not recorded",
    "context": "",
    "head_hash": "no entry yet",
    "chain_head_hash": "no entry yet",
}
RATE_KEYS = {
    "coverage",
    "automation_bias_rate",
    "rair",
    "rsr",
    "accuracy",
    "ai_accuracy",
    "mean_ai_confidence",
    "ai_confidence",
}
# Differences of two rates: discrimination is how much more often advice that should be followed is
# followed than advice that should be overridden (docs/reference/calibration.md).
POINT_KEYS = {
    "calibration_gap",
    "model_disparity_observed",
    "human_disparity",
    "discrimination",
    "discrimination_ci",
}
SCORE_KEYS = {
    "trust_score",
    "attainable_score",
    "reliance_gap",
    "reliance_skill",
    "amplification_score",
    "disparate_impact_ratio",
    "impact_ratio",
    "d_prime",
    "slope",
    "slope_ci",
    "slope_se",
    "lr_statistic",
    "intercept",
    "intercept_ci",
    "brier_score",
}
# Codes the data holds as identifiers, printed in words where a reader meets them as a value.
WORDS = {
    "not_checked": "not checked",
    "consistent": "consistent",
    "miscalibrated": "miscalibrated",
}
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]00:?00)$")


def not_measured(key: str = "") -> str:
    reason = REASONS.get(key)
    return f"{NOT_MEASURED} ({reason})" if reason else f"{NOT_MEASURED} (no data for it in the period)"


def count(value: int | None) -> str:
    return "0" if value is None else f"{int(value):,}"


def pct(value: float | None, key: str = "") -> str:
    """A rate (0..1) as a percentage with one decimal: 0.169091 -> "16.9%"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return not_measured(key)
    return f"{value * 100:.1f}%"


def points(value: float | None, key: str = "") -> str:
    """A difference of two rates, in percentage points with its sign: -0.1436 -> "-14.4 pp"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return not_measured(key)
    return f"{value * 100:+.1f} pp"


def score(value: float | None, key: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return not_measured(key)
    return f"{value + 0.0:.2f}" if round(value, 2) != 0 else "0.00"  # never "-0.00"


def when(value: str | dt.datetime | None) -> str:
    """An instant as "2026-11-23 14:05:12 UTC" (the reports' times are all UTC)."""
    if value is None:
        return "not recorded"
    instant = (
        value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    )
    return instant.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def enumeration(values: Sequence[object], empty: str = "none") -> str:
    """Items joined by commas; sentences (items ending in a full stop) by spaces."""
    if not values:
        return empty
    texts = [str(v) for v in values]
    return " ".join(texts) if all(t.endswith(".") for t in texts) else ", ".join(texts)


def by_key(counts: dict[str, int], order: tuple[str, ...] = ()) -> str:
    """{"open": 1, "resolved": 2} as "1 open, 2 resolved" (zero counts left out)."""
    keys = [k for k in order if k in counts] + sorted(k for k in counts if k not in order)
    parts = [f"{count(counts[k])} {k.replace('_', ' ')}" for k in keys if counts[k]]
    return ", ".join(parts) if parts else "none"


def _sequence(key: str, values: Sequence[object]) -> str:
    if key.endswith("_ci") and len(values) == 2:  # an interval [low, high]
        return f"{figure(key, values[0])} to {figure(key, values[1])}"
    return enumeration([figure(key, v) for v in values])


def figure(key: str, value: object) -> str:
    """A value of the report data, printed by what its key says it is."""
    if value is None:
        return ABSENT_WORDS.get(key, not_measured(key))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return count(value)
    if isinstance(value, float):
        if key in POINT_KEYS or key.endswith("_difference"):
            return points(value, key)
        if key in RATE_KEYS or key.endswith(("_rate", "_rate_ci")):
            return pct(value, key)
        if key in ("p_value", "q_value", "lr_p_value"):
            return p_value_text(value)
        if math.isnan(value):
            return not_measured(key)
        return score(value, key) if key in SCORE_KEYS else f"{value:,.4g}"
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {figure(k, v)}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return _sequence(key, value)
    text = str(value)
    if _TIMESTAMP.match(text):
        return when(text)
    return WORDS.get(text, text)
