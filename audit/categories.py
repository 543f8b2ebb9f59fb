"""The per-record calibration category of a decision (docs/reference/calibration.md), part of the decision record: it is
stored with the decision, shown in its answer and hashed into its entries, so it is derived
where the record is built. The thresholds are settings; `calibration.rules` builds every
per-user figure on top of these definitions."""

from typing import Any

from django.conf import settings

CALIBRATED = "CALIBRATED"
OVERTRUSTING = "OVERTRUSTING"
UNDERTRUSTING = "UNDERTRUSTING"
RECORD_CATEGORIES = [CALIBRATED, OVERTRUSTING, UNDERTRUSTING]
MISCALIBRATED = {OVERTRUSTING, UNDERTRUSTING}


def setting(name: str, default: Any) -> Any:
    """Thresholds are settings; these are the defaults (docs/reference/calibration.md, Settings)."""
    return getattr(settings, name, default)


def low_confidence() -> float:
    return setting("CALIBRATION_LOW_CONFIDENCE", 0.5)


def high_confidence() -> float:
    return setting("CALIBRATION_HIGH_CONFIDENCE", 0.8)


def norm(value: str | None) -> str | None:
    """Decisions compare after trimming and case-folding (docs/reference/calibration.md, Comparing
    decisions)."""
    return None if value is None else value.strip().casefold()


def same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and norm(a) == norm(b)


def followed(ai_recommendation: str, user_decision: str) -> bool:
    return same(ai_recommendation, user_decision)


def record_category(
    *, ai_recommendation: str, user_decision: str, confidence: float | None, outcome: str | None
) -> str:
    """Category of a decision (docs/reference/calibration.md): a known outcome decides; else the AI's
    confidence; else CALIBRATED."""
    did_follow = followed(ai_recommendation, user_decision)
    if outcome is not None:
        ai_right = same(outcome, ai_recommendation)
        if did_follow and not ai_right:
            return OVERTRUSTING
        if not did_follow and ai_right:
            return UNDERTRUSTING
        return CALIBRATED
    if confidence is not None:
        if did_follow and confidence < low_confidence():
            return OVERTRUSTING
        if not did_follow and confidence >= high_confidence():
            return UNDERTRUSTING
    return CALIBRATED
