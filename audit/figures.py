"""The shapes of the calibration figures (docs/reference/calibration.md) that `audit.measures`
computes: the document the API serves, the console shows, the reports print and the offline
report check recomputes. Free of Django, like `audit.measures`, which re-exports them."""

from typing import Literal, NotRequired, TypedDict

Miscalibrated = Literal["OVERTRUSTING", "UNDERTRUSTING"]
RecordCategory = Literal["CALIBRATED", "UNSCORED"] | Miscalibrated  # a decision's, stored with it
UserCategory = Literal["CALIBRATED", "NON_DISCRIMINATING", "INSUFFICIENT_DATA"] | Miscalibrated
RiskLevel = Literal["low", "medium", "high", "insufficient_data"]


class Scores(TypedDict):
    """trust_score T, attainable_score A and reliance_gap R = A - T (`scores`)."""

    trust_score: float | None
    attainable_score: float | None
    reliance_gap: float | None


class RiskUser(TypedDict):
    """A risk user's figures as the risk-user list shows them (docs/reference/calibration.md, Risk
    users); `Figures` holds them all, so a user's figures are read as a risk user's alike."""

    trust_score: float | None
    reliance_gap: float | None
    risk_level: RiskLevel
    decisions: int
    scored_decisions: int
    category: UserCategory
    overtrust_rate: float | None
    overtrust_rate_ci: list[float]
    undertrust_rate: float | None
    undertrust_rate_ci: list[float]


class TrustRates(TypedDict):
    """The over- and under-trust rates with their effective n and confidence intervals
    (docs/reference/calibration.md): a user's, an organisation's or a subgroup's."""

    overtrust_rate: float | None
    overtrust_effective_n: float
    overtrust_rate_ci: list[float]
    undertrust_rate: float | None
    undertrust_effective_n: float
    undertrust_rate_ci: list[float]


class Figures(Scores, TrustRates):
    """Every figure of a user, an organisation or a period (`figures`; docs/reference/calibration.md):
    the document the API serves, the console shows and the reports print."""

    decisions: int
    scored_decisions: int
    unscored_decisions: int
    confidence_decisions: int
    coverage: float | None
    agreement_rate: float | None
    override_rate: float | None
    mean_ai_confidence: float | None
    calibration_gap: float | None
    reliance_skill: NotRequired[float | None]  # not in a trend point's figures
    discrimination: float | None
    discrimination_ci: list[float] | None
    category: UserCategory
    risk_level: RiskLevel
    outcomes_known: int
    ai_accuracy: float | None
    overreliance_rate: float | None
    underreliance_rate: float | None
    switch_rate: float | None
    rair: float | None
    rsr: float | None
    automation_bias_incidents: int
    automation_bias_rate: float | None
    followed_ai_errors: int
    confidence_recalibrated: bool
