"""The calibration documents the API serves, the console shows and the reports print
(docs/reference/calibration.md): one shape each, built by the selectors and `calibration.reporting`,
read by the serializers, the console pages and the report sections, so mypy checks every reader."""

from typing import Literal, TypedDict

from audit.measures import Figures, RiskUser
from audit.measures_stats import Direction


class UserFigures(Figures):
    """A user's figures (POST /calibrate's profile, POST /trust-score's user scope)."""

    user_id: str


class UserRow(UserFigures):
    """A row of the per-user list (the console's users page, a report's users table)."""

    at_risk: bool


class ListedRiskUser(RiskUser):
    user_id: str


class Counts(TypedDict):
    """A report's counts of the organisation's decisions."""

    followed: int
    overridden: int
    overtrust: int
    undertrust: int
    followed_ai_errors: int
    with_confidence: int
    with_outcome: int
    with_initial_decision: int


class OrganisationFigures(Figures):
    """An organisation's figures over a report's decisions, with their counts."""

    counts: Counts


class TrendPoint(TypedDict):
    period_start: str  # ISO date
    decisions: int
    scored_decisions: int
    trust_score: float | None
    attainable_score: float | None
    reliance_gap: float | None
    agreement_rate: float | None
    overtrust_count: int
    undertrust_count: int
    followed_ai_errors: int


Interval = Literal["day", "week", "month"]


class TrendSummary(TypedDict):
    direction: Direction
    slope: float | None  # of the reliance gap per period (WLS)
    slope_se: float | None
    periods_fitted: int


class Trend(TypedDict):
    """GET /trust-score/trend's points and summary, before the window and filters are added."""

    points: list[TrendPoint]
    trend: TrendSummary


class IntervalTrend(Trend):
    """A report's trend, in the interval that suits its period."""

    interval: Interval


class ConfidenceBand(TypedDict):
    band: str  # "0.2-0.4"
    decisions: int
    agreement_rate: float | None
    mean_ai_confidence: float | None
    outcomes_known: int
    ai_accuracy: float | None
    overtrust_count: int


class ModelSeen(TypedDict):
    model_id: str | None
    model_version: str | None
    decisions: int
    agreement_rate: float
