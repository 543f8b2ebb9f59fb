"""The per-record calibration category of a decision (docs/reference/calibration.md), part of the decision record: it is
stored with the decision, shown in its answer and hashed into its entries, so it is derived
where the record is built. The rule itself is in `audit.measures` (free of Django, shared with the
offline report check); `calibration.rules` builds every per-user figure on top of it."""

from django.conf import settings

from audit.measures import (
    CALIBRATED,
    OVERTRUSTING,
    UNDERTRUSTING,
    UNSCORED,
    norm,
    record_category,
    same,
)

__all__ = [
    "CALIBRATED",
    "MISCALIBRATED",
    "OVERTRUSTING",
    "RECORD_CATEGORIES",
    "UNDERTRUSTING",
    "UNSCORED",
    "followed",
    "norm",
    "record_category",
    "same",
    "setting",
]

RECORD_CATEGORIES = [CALIBRATED, OVERTRUSTING, UNDERTRUSTING, UNSCORED]
MISCALIBRATED = {OVERTRUSTING, UNDERTRUSTING}


def setting[T](name: str, default: T) -> T:
    """Thresholds are settings; these are the defaults (docs/reference/calibration.md, Settings)."""
    return getattr(settings, name, default)


def followed(ai_recommendation: str, user_decision: str) -> bool:
    return same(ai_recommendation, user_decision)
