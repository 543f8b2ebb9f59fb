"""The shape of a report's evidence (compliance.evidence.gather): the one document the report
sections, the executive summary, the recommendations and the PDF read, so that mypy checks each
reader against what gather builds."""

import datetime as dt
from typing import NotRequired, TypedDict

from bias.selectors import AttributeFigures
from calibration.confidence import ConfidenceCheck
from calibration.documents import ConfidenceBand, IntervalTrend, ModelSeen, OrganisationFigures, UserRow
from config.jsondoc import JSONObject
from drift.reporting import ReportRows
from oversight.selectors import ModelTimes, ProbeFigures, ReviewerEffort, ReviewerVigilance, TeamEffort


class Subgroups(TypedDict):
    scope: str  # what the statistics cover, in words
    attributes: dict[str, AttributeFigures]
    favourable_values: dict[str, list[str]]  # "default" and each model's


class Alerts(TypedDict):
    bias_alerts: JSONObject  # counts and items (_bias_item), rendered as JSON
    amplification: JSONObject  # counts and items (_amplification_item), rendered as JSON


class EffortEvidence(TypedDict):
    evidences: str  # the point of law the figures evidence
    team: TeamEffort
    models: list[ModelTimes]
    reviewers: NotRequired[list[ReviewerEffort]]  # with the per-person permission
    reviewers_withheld: NotRequired[str]  # without it: the note that stands for them


class VigilanceEvidence(TypedDict):
    evidences: str
    totals: ProbeFigures
    reviewers: NotRequired[list[ReviewerVigilance]]
    reviewers_withheld: NotRequired[str]


class Oversight(TypedDict):
    review_effort: EffortEvidence
    vigilance: VigilanceEvidence


class Drift(TypedDict):
    rows: ReportRows  # drift.reporting.report_rows: monitors, alarms, SPRT conclusions
    start: dt.datetime
    end: dt.datetime
    per_person: bool


# The previous period's headline figures ("from" is a keyword: the functional form).
PreviousPeriod = TypedDict(
    "PreviousPeriod",
    {
        "from": str,
        "to": str,
        "total_decisions": int,
        "scored_decisions": int,
        "automation_bias_incidents": int,
        "automation_bias_rate": float | None,
        "human_override_rate": float | None,
        "overtrust_rate": float | None,
        "trust_score": float | None,
        "attainable_score": float | None,
        "reliance_gap": float | None,
    },
)


class Evidence(Alerts, Oversight):
    """Every figure both templates draw on (`gather`): the one document the report sections,
    the executive summary, the recommendations and the PDF read."""

    window: dict[str, str]  # from, to
    organisation: OrganisationFigures
    users: list[UserRow]
    thresholds: dict[str, float]  # the settings the figures were judged with (measures.Thresholds)
    confidence_bands: list[ConfidenceBand]
    confidence_check: ConfidenceCheck
    trend: IntervalTrend
    models: list[ModelSeen]
    system_description: list[JSONObject]  # each model's profile, as its editor wrote it
    subgroups: Subgroups
    drift: Drift
    chain: JSONObject  # audit.verify's verification, with verified_at
    checkpoint: JSONObject  # audit.checkpoints' evidence of the signed head
    erasures: JSONObject  # audit's erasures of the period
    previous_period: PreviousPeriod | None
