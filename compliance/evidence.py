"""What a report says, gathered once from the other apps' selectors: the filtered decisions'
calibration figures, subgroups, alerts and the audit chain. Both templates organise this
same evidence; every figure is computed in SQL (grouped), none per decision in Python."""

import datetime as dt
from dataclasses import asdict, dataclass, field, replace

from django.db.models import Count, QuerySet

from audit import checkpoints as audit_checkpoints
from audit import selectors as audit_selectors
from audit import verify as audit_verify
from bias import selectors as bias_selectors
from bias.domain import DETECTION_WINDOW_DAYS
from bias.selectors import BiasAlert
from calibration import reporting, rules
from calibration import services as calibration_services
from calibration.documents import ModelSeen
from compliance import citations, profiles
from compliance.documents import (
    Alerts,
    Drift,
    EffortEvidence,
    Evidence,
    Oversight,
    PreviousPeriod,
    Subgroups,
    VigilanceEvidence,
)
from config.jsondoc import JSONObject
from config.timeutils import iso8601, isoformat
from drift import reporting as drift_reporting
from fairness import selectors as fairness_selectors
from fairness.selectors import AmplificationAlert
from keys.models import Customer
from oversight import selectors as oversight_selectors

ALERT_ITEMS_MAX = 200  # alerts listed one by one; the counts always cover all of them
UNRESOLVED = ("open", "acknowledged")
SERIOUS = ("high", "critical")


@dataclass(frozen=True)
class Scope:
    """A report's customer, period [start, end) and filters (docs/reference/reports.md), and
    whether it carries oversight figures per reviewer (docs/reference/oversight.md, "Who sees
    what")."""

    customer: Customer
    start: dt.datetime
    end: dt.datetime
    time_period: dict[str, str]
    filters: dict[str, list[str]] = field(default_factory=dict)
    per_person: bool = True

    @property
    def first_day(self) -> dt.date:
        return self.start.astimezone(dt.UTC).date()

    @property
    def last_day(self) -> dt.date:
        return (self.end - dt.timedelta(microseconds=1)).astimezone(dt.UTC).date()

    def decisions(self) -> QuerySet:
        return audit_selectors.decision_set(
            self.customer,
            since=self.start,
            until=self.end,
            user_ids=self.filters.get("user_ids"),
            model_ids=self.filters.get("model_ids"),
            categories=self.filters.get("calibration"),
        )


def _amplification_item(alert: AmplificationAlert, *, in_period: bool) -> JSONObject:
    """An amplification alert with what its analysis measured (the signal's metric, both groups'
    rates and sizes, the window of decisions) and whether it was created or changed in the
    period (`in_period`; the others are listed because they are still open and serious)."""
    analysis = alert.analysis or {}
    signal = alert.signal
    return {
        "alert_id": alert.id,
        "in_period": in_period,
        "signal_id": alert.signal_id,
        "external_tool": signal.external_tool_id,
        "metric_name": signal.metric_name,
        "metric_value": signal.metric_value,
        "model_id": alert.model_id,
        "protected_attribute": alert.protected_attribute,
        "severity": alert.severity,
        "status": alert.status,
        "amplification_score": alert.amplification_score,
        "direction": analysis.get("direction"),
        "model_disparity_observed": analysis.get("modelDisparityObserved"),
        "human_disparity": analysis.get("humanDisparity"),
        "decisions_analyzed": analysis.get("decisionsAnalyzed"),
        "groups": analysis.get("groups"),
        "window": {
            "from": isoformat(fairness_selectors.correlation_since(signal)),
            "to": analysis.get("analyzedAt"),
        },
        "created_at": isoformat(alert.created_at),
        "resolution_notes": alert.resolution_notes,
        "status_history": [
            {
                "from": change.from_status,
                "to": change.to_status,
                "by": change.by,
                "notes": change.notes,
                "at": isoformat(change.at),
            }
            for change in alert.status_changes.all()
        ],
    }


def _bias_item(alert: BiasAlert) -> JSONObject:
    """A bias alert with its findings (what each compared, with rates, sizes, p and q values) and
    the window its analysis read (docs/reference/bias.md, Window and scope). It has no triage
    state: its history is its creation by bias detection."""
    created = isoformat(alert.created_at)
    since = (alert.created_at - dt.timedelta(days=DETECTION_WINDOW_DAYS)).astimezone(dt.UTC).date()
    return {
        "alert_id": alert.id,
        "decision_id": alert.decision_id,
        "model_id": alert.model_id,
        "severity": alert.severity,
        "bias_types": alert.bias_types,
        "attributes": alert.attributes,
        "findings": alert.findings,
        "window": {"from": isoformat(dt.datetime.combine(since, dt.time.min, tzinfo=dt.UTC)), "to": created},
        "created_at": created,
        "status_history": [
            {"from": None, "to": "raised", "by": "bias detection", "notes": None, "at": created}
        ],
    }


def _counts(qs: QuerySet[AmplificationAlert] | QuerySet[BiasAlert], field: str) -> dict[str, int]:
    rows = qs.order_by().values(field).annotate(n=Count("pk"))
    return {row[field]: row["n"] for row in rows}


def _amplification(scope: Scope) -> JSONObject:
    model_ids = scope.filters.get("model_ids")
    qs = fairness_selectors.alerts_for_report(scope.customer, until=scope.end, model_ids=model_ids)
    by_status = _counts(qs, "status")
    serious = qs.filter(status__in=UNRESOLVED, severity__in=SERIOUS)
    # Listed one by one with their status history: the alerts created or changed in the period,
    # and every unresolved high or critical one (they weigh on the EU status).
    touched = fairness_selectors.alerts_touched_in(
        scope.customer, since=scope.start, until=scope.end, model_ids=model_ids
    )
    in_period = list(touched[:ALERT_ITEMS_MAX])
    shown = in_period + list(serious.exclude(pk__in=[alert.pk for alert in in_period]))
    return {
        "total": sum(by_status.values()),
        "in_period": touched.count(),
        "by_status": by_status,
        "by_severity": _counts(qs, "severity"),
        "unresolved_high_or_critical": [
            {"alert_id": alert_id, "severity": severity}
            for alert_id, severity in serious.values_list("id", "severity")
        ],
        "items": [_amplification_item(alert, in_period=i < len(in_period)) for i, alert in enumerate(shown)],
    }


def _bias_alerts(scope: Scope) -> JSONObject:
    qs = bias_selectors.bias_alerts_for_report(
        customer=scope.customer, since=scope.start, until=scope.end, model_ids=scope.filters.get("model_ids")
    )
    by_severity = _counts(qs, "severity")
    return {
        "total": sum(by_severity.values()),
        "by_severity": by_severity,
        "items": [_bias_item(alert) for alert in qs[:ALERT_ITEMS_MAX]],
    }


def _subgroups(scope: Scope) -> Subgroups:
    model_ids = scope.filters.get("model_ids") or []
    report = bias_selectors.subgroup_report(
        customer=scope.customer,
        attribute=None,
        model_id=model_ids[0] if len(model_ids) == 1 else None,
        from_day=scope.first_day,
        to_day=scope.last_day,
    )
    return {
        "scope": (
            "Daily subgroup statistics of the period's whole days"
            + (f", model {model_ids[0]}" if len(model_ids) == 1 else ", all models")
            + "; reviewer and calibration filters do not apply to them."
        ),
        "attributes": report["attributes"],
        # The favourable values every favourable rate above rests on (docs/reference/bias.md,
        # Favourable values): the models' own, else the default list.
        "favourable_values": {
            "default": bias_selectors.favorable_values(customer=scope.customer, model_id=None),
            **{
                model_id: bias_selectors.favorable_values(customer=scope.customer, model_id=model_id)
                for model_id in _model_ids(scope)
            },
        },
    }


def _model_ids(scope: Scope) -> list[str]:
    """The model ids the report's decisions name (sorted)."""
    rows = scope.decisions().order_by().exclude(model_id=None).values_list("model_id", flat=True).distinct()
    return sorted(rows)


REVIEW_EFFORT_POINT = citations.point("review_effort", citations.EU_AI_ACT)
VIGILANCE_POINT = citations.point("vigilance", citations.EU_AI_ACT)


PER_PERSON_WITHHELD = citations.withheld(citations.EU_AI_ACT)


def _narrow(scope: Scope) -> JSONObject:
    return {"model_id": scope.filters.get("model_ids"), "user_id": scope.filters.get("user_ids")}


def _oversight(scope: Scope) -> Oversight:
    """Review effort and vigilance over the report's period and its reviewer and model filters
    (the calibration filter does not apply). Review effort leaves probes out; vigilance is the
    probes alone."""
    narrow = _narrow(scope)
    effort = oversight_selectors.review_effort(scope.customer, since=scope.start, until=scope.end, **narrow)
    vigilance = oversight_selectors.vigilance(scope.customer, since=scope.start, until=scope.end, **narrow)
    review_effort: EffortEvidence = {
        "evidences": REVIEW_EFFORT_POINT,
        "team": effort.team(),
        "models": effort.models,
    }
    watchfulness: VigilanceEvidence = {"evidences": VIGILANCE_POINT, "totals": vigilance.totals}
    # The rows per reviewer, or, without the per-person permission, a member saying they are
    # withheld (so that no reader takes their absence for "no reviewer").
    if scope.per_person:
        review_effort["reviewers"] = effort.users
        watchfulness["reviewers"] = vigilance.users
    else:
        review_effort["reviewers_withheld"] = watchfulness["reviewers_withheld"] = PER_PERSON_WITHHELD
    return {"review_effort": review_effort, "vigilance": watchfulness}


def rubber_stampers(scope: Scope) -> int:
    """Reviewers flagged for quick agreement over the report's period and filters."""
    narrow = _narrow(scope)
    return oversight_selectors.review_effort(
        scope.customer, since=scope.start, until=scope.end, **narrow
    ).flagged


def drift(scope: Scope) -> Drift:
    """The drift monitors' rows of the period and filters (compliance/drift_report.py builds each
    template's member from them), with the period and whether rows per reviewer may be shown."""
    rows = drift_reporting.report_rows(
        scope.customer,
        start=scope.start,
        end=scope.end,
        model_ids=scope.filters.get("model_ids"),
        user_ids=scope.filters.get("user_ids"),
    )
    return {"rows": rows, "start": scope.start, "end": scope.end, "per_person": scope.per_person}


def alerts(scope: Scope) -> Alerts:
    """The period's bias alerts and the amplification alerts raised before its end."""
    return {"bias_alerts": _bias_alerts(scope), "amplification": _amplification(scope)}


def previous_period(scope: Scope) -> PreviousPeriod | None:
    """The figures of the period of the same length just before the report's, same filters
    (what changed since), or None when it holds no decision."""
    length = scope.end - scope.start
    before = replace(scope, start=scope.start - length, end=scope.start)
    _, recalibrate = reporting.recalibration_for(before.decisions())
    organisation, _ = reporting.user_figures(before.decisions(), recalibrate=recalibrate)
    if not organisation["decisions"]:
        return None
    return {
        "from": iso8601(before.start),
        "to": iso8601(before.end),
        "total_decisions": organisation["decisions"],
        "scored_decisions": organisation["scored_decisions"],
        "automation_bias_incidents": organisation["counts"]["overtrust"],
        "automation_bias_rate": organisation["automation_bias_rate"],
        "human_override_rate": organisation["override_rate"],
        "overtrust_rate": organisation["overtrust_rate"],
        "trust_score": organisation["trust_score"],
        "attainable_score": organisation["attainable_score"],
        "reliance_gap": organisation["reliance_gap"],
    }


def _whole_days(scope: Scope) -> tuple[dt.date, dt.date]:
    """The first and last days the report's period covers whole (a trend period reaching beyond
    them is shown but not fitted)."""
    first, last = scope.first_day, scope.last_day
    if scope.start.astimezone(dt.UTC).time() != dt.time.min:
        first += dt.timedelta(days=1)
    if scope.end.astimezone(dt.UTC).time() != dt.time.min and last > dt.date.min:
        last -= dt.timedelta(days=1)
    return first, last


def _with_versions(profiles: list[JSONObject], models: list[ModelSeen]) -> list[JSONObject]:
    """Each model's profile with the versions its decisions of the period name
    (`versions_in_period`: model_version and decisions), which the report prints as the version
    in use; the profile's own `version` is what its editor declared."""
    return [
        {
            **profile,
            "versions_in_period": [
                {"model_version": row["model_version"], "decisions": row["decisions"]}
                for row in models
                if row["model_id"] == profile["model_id"]
            ],
        }
        for profile in profiles
    ]


def gather(scope: Scope) -> Evidence:
    """Every figure both templates draw on. Features that add report figures put them here
    under their own key (`review_effort`, `vigilance`, `checkpoint`, `erasures`); the templates print
    "not measured" with the reason while a key is absent."""
    # The thresholds in force are in the chain before the checkpoint below covers it.
    calibration_services.thresholds_record(scope.customer)
    decisions = scope.decisions()
    # The confidence check over the report's decisions; when it rejects the AI's confidence, every
    # confidence-based figure of the report is judged with the recalibrated p' (one fit, like pi).
    check, recalibrate = reporting.recalibration_for(decisions)
    organisation, users = reporting.user_figures(decisions, recalibrate=recalibrate)
    whole = _whole_days(scope)
    # A checkpoint of the chain's head, signed first so that the verification checks it as well.
    checkpoint = audit_checkpoints.checkpoint_for_report(customer=scope.customer)
    chain = audit_verify.chain_verify_covered(scope.customer)  # with the range it covers
    now = dt.datetime.now(dt.UTC)
    models = reporting.models_seen(decisions)
    model_ids = list(dict.fromkeys(row["model_id"] for row in models if row["model_id"]))
    return {
        "window": {"from": iso8601(scope.start), "to": iso8601(scope.end)},
        "organisation": organisation,
        "users": users,
        # The settings the calibration figures and the status were judged with
        # (docs/reference/calibration.md, Settings).
        "thresholds": asdict(rules.thresholds()),
        "confidence_bands": reporting.confidence_bands(decisions),
        "confidence_check": check,
        "trend": reporting.trust_trend(
            decisions,
            start=scope.first_day,
            end=scope.last_day,
            recalibrate=recalibrate,
            first=whole[0],
            last=whole[1],
        ),
        "models": models,
        "system_description": _with_versions(
            profiles.profiles_of(customer=scope.customer, model_ids=model_ids), models
        ),
        "subgroups": _subgroups(scope),
        **alerts(scope),
        **_oversight(scope),
        "drift": drift(scope),
        "chain": {**chain, "verified_at": isoformat(now)},
        "checkpoint": audit_checkpoints.checkpoint_evidence(checkpoint=checkpoint),
        # the whole organisation's, whatever the filters: an erasure names no reviewer or model
        "erasures": audit_selectors.erasures_of_period(scope.customer, since=scope.start, until=scope.end),
        "previous_period": previous_period(scope),
    }
