"""Fairness signals of the demo, computed with Fairlearn from the decisions `seed_demo` logs (so their
figures are real), shaped as the POST /model-fairness-signals bodies Fairlearn users send."""

import datetime as dt
from dataclasses import dataclass

from console.demo_data import MODEL


@dataclass(frozen=True)
class Step:
    status: str
    days_after: float  # after the alert was raised: every step stays inside the alert's month
    notes: str | None = None


@dataclass(frozen=True)
class SignalPlan:
    attribute: str
    privileged: str
    unprivileged: str
    metric: str  # a key of FUNCTIONS
    version: str  # the model version whose decisions are measured
    age_days: float  # how long ago the tool ran (and the alert was raised)
    triage: tuple[Step, ...] = ()  # the officer's status changes, oldest first

    @property
    def status(self) -> str:
        return self.triage[-1].status if self.triage else "open"


# The older month's signals ran ten days before its end and were triaged within it; the recent
# month's ran today and yesterday. The ethnicity signal raises no alert: the model's gap is there,
# but the desk did not widen it.
PLANS = (
    SignalPlan("gender", "male", "female", "demographic_parity", "2.3", 0.1),
    SignalPlan("gender", "male", "female", "disparate_impact", "2.3", 0.9,
               (Step("acknowledged", 0.5, "Seen; gender gap under review with the desk lead this week."),)),
    SignalPlan("age_group", "35-54", "55+", "equalized_odds", "2.2", 40, (
        Step("acknowledged", 1, "Pulling the declined files of applicants over 55 for a second review."),
        Step("resolved", 5,
             "Reviewed 40 declined files of applicants over 55 with the desk lead: 11 lacked a recorded reason. "
             "Overrides now require a reason code; re-check next quarter."),
    )),
    SignalPlan("age_group", "35-54", "18-34", "demographic_parity", "2.2", 40, (
        Step("false_positive", 3,
             "The gap comes from a promotion aimed at first-time borrowers that month, not from the reviewers."),
    )),
    SignalPlan("ethnicity", "white", "black", "equalized_odds", "2.2", 40),
)  # fmt: skip


def _as_arrays(
    rows: list[dict], plan: SignalPlan, *, with_outcome: bool
) -> tuple[list[int], list[int], list[str]]:
    y_true, y_pred, groups = [], [], []
    for row in rows:
        group = row["subgroups"][plan.attribute]
        if row["model_version"] != plan.version or group not in (plan.privileged, plan.unprivileged):
            continue
        if with_outcome and "outcome" not in row:
            continue
        y_pred.append(1 if row["ai_recommendation"] == "approve" else 0)
        y_true.append(1 if row.get("outcome", row["ai_recommendation"]) == "approve" else 0)
        groups.append(group)
    return y_true, y_pred, groups


def signal_body(rows: list[dict], plan: SignalPlan, *, now: dt.datetime) -> dict[str, object]:
    """One signal: Fairlearn's metric over the AI's recommendations for the two groups, with its
    per-group breakdown as the raw payload."""
    import fairlearn
    from fairlearn import metrics

    functions = {  # the signal's metricName -> Fairlearn's function
        "demographic_parity": metrics.demographic_parity_difference,
        "disparate_impact": metrics.demographic_parity_ratio,
        "equalized_odds": metrics.equalized_odds_difference,  # needs the outcomes
    }
    function = functions[plan.metric]
    y_true, y_pred, groups = _as_arrays(rows, plan, with_outcome=plan.metric == "equalized_odds")
    value = float(function(y_true, y_pred, sensitive_features=groups))
    frame = metrics.MetricFrame(
        metrics=metrics.selection_rate, y_true=y_true, y_pred=y_pred, sensitive_features=groups
    )
    by_group = {str(k): round(float(v), 6) for k, v in frame.by_group.items()}
    return {
        "externalToolId": "fairlearn",
        "externalToolVersion": fairlearn.__version__,
        "modelId": MODEL,
        "modelVersion": plan.version,
        "metricName": plan.metric,
        "metricValue": round(value, 6),
        "threshold": 0.8 if plan.metric == "disparate_impact" else 0.1,
        "passesThreshold": value >= 0.8 if plan.metric == "disparate_impact" else value <= 0.1,
        "protectedAttribute": plan.attribute,
        "privilegedGroup": plan.privileged,
        "unprivilegedGroup": plan.unprivileged,
        "sampleSize": len(y_pred),
        "rawPayload": {
            "library": "fairlearn",
            "function": f"fairlearn.metrics.{function.__name__}",
            "value": value,
            "selection_rate_by_group": by_group,
            "n_samples": len(y_pred),
        },
        "signalTimestamp": (now - dt.timedelta(days=plan.age_days)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
    }
