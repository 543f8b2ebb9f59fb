"""Writes for trust calibration: the daily aggregates (written by the decision pipeline through
calibration.contributions, inside the decision's transaction),
trust.miscalibrated, risk_user.identified and threshold.breached."""

import dataclasses
import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.utils import timezone

from audit import selectors as audit_selectors
from audit import services as audit_services
from audit.inputs import DecisionInput
from audit.measures import Figures, RiskUser
from calibration import reporting, rules, selectors
from calibration.confidence import recalibration_of
from calibration.documents import ListedRiskUser, UserFigures
from calibration.models import ALL_MODELS, RiskUserState, Threshold, UserDailyAggregate
from config.db import prepared
from config.db.bulk import additive_upsert
from config.jsondoc import JSONObject
from keys.models import Customer
from webhooks.services import event_emit

if TYPE_CHECKING:
    from audit.models import Decision

logger = logging.getLogger("trustcal.calibration")

_KEY_COLUMNS = ["customer_id", "user_id", "model_key", "day"]


class AggregateFold:
    """Deltas folded per (user, model key, day) before one upsert: many decisions of a
    batch cost one statement per 500 aggregate rows instead of one per decision."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, dt.date], dict[str, float]] = {}

    def add(self, *, user_id: str, model_id: str | None, day: dt.date, delta: Mapping[str, float]) -> None:
        if not delta:
            return
        for key in [ALL_MODELS] + ([model_id] if model_id else []):
            row = self.rows.setdefault((user_id, key, day), {})
            for name, value in delta.items():
                row[name] = row.get(name, 0) + value


def aggregates_fold_apply(*, customer_id: str, fold: AggregateFold, batch: int = 500) -> None:
    """One additive INSERT ... ON CONFLICT DO UPDATE (per `batch` rows on SQLite), in key order (two
    writers lock shared rows in the same order, so they never deadlock)."""
    if not fold.rows:
        return
    additive_upsert(
        UserDailyAggregate,
        key=_KEY_COLUMNS,
        values=rules.SUM_FIELDS,
        rows=(
            (customer_id, user_id, key, day, *(delta.get(name, 0) for name in rules.SUM_FIELDS))
            for (user_id, key, day), delta in fold.rows.items()
        ),
        batch=batch,
    )


def decision_day(decision: "Decision") -> dt.date:
    return decision.timestamp.astimezone(dt.UTC).date()


# the event's data, rendered as JSON
def miscalibrated_event(*, decision: "Decision", entry_id: str | None, source: str) -> tuple[str, JSONObject]:
    """trust.miscalibrated with the decision as it is now."""
    return (
        "trust.miscalibrated",
        {
            "decision_id": decision.decision_id,
            "entry_id": entry_id,
            "user_id": decision.user_id,
            "model_id": decision.model_id,
            "calibration_category": decision.calibration_category,
            "followed_ai": decision.followed_ai,
            "ai_confidence": decision.ai_confidence,
            "outcome": decision.outcome,
            "source": source,
        },
    )


# --- POST /calibrate ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CalibrateResult:
    decision: "Decision"
    entry_id: str
    profile: UserFigures


def decision_calibrate(*, customer: Customer, data: DecisionInput) -> CalibrateResult:
    """POST /calibrate: record the decision exactly as POST /log (its own transaction, which
    holds the customer's chain head only for its last statement and the commit), then read
    the user's profile and record whether the user is now at risk (a write only when that
    changes). Not one transaction on purpose: the profile read and the risk check would run
    inside the chain head's critical section and serialise every writer of the customer."""
    result = audit_services.decision_log(customer=customer, data=data, source="calibrate")
    decision = result.decision
    profile = user_profile_judged(customer, user_id=decision.user_id)
    risk_user_evaluate(customer=customer, user_id=decision.user_id, figures=profile)
    return CalibrateResult(decision=decision, entry_id=result.entry.id, profile=profile)


def user_profile_judged(customer: Customer, *, user_id: str) -> UserFigures:
    """The user's profile over the default window (docs/reference/calibration.md, POST /calibrate)
    as POST /trust-score would give it: the confidence check over the organisation's decisions of
    the window, and, when it rejects, every figure judged with the recalibrated p' (from the
    window's decisions; the daily aggregates hold the logged confidence)."""
    thresholds_record(customer)
    days = selectors.DayRange.last_days(rules.window_days())
    since = dt.datetime.combine(days.start, dt.time.min, tzinfo=dt.UTC)
    until = since + dt.timedelta(days=(days.end - days.start).days + 1)
    recalibrate = recalibration_of(reporting.window_confidence_check(customer, since=since, until=until))
    if recalibrate is None:
        return selectors.user_profile(customer, user_id=user_id, days=days)
    window = audit_selectors.decision_set(customer, since=since, until=until)
    return reporting.exact_user_figures(
        window.filter(user_id=user_id), user_id=user_id, recalibrate=recalibrate
    )


def thresholds_record(customer: Customer) -> None:
    """Make the customer's chain record the category thresholds in force when they differ from
    the last it recorded (the documented defaults when none): a `settings_changed` entry
    (docs/reference/calibration.md, Settings). Costs no statement while they stay the same."""
    audit_services.thresholds_recorded(
        customer.pk, dataclasses.asdict(rules.thresholds()), dataclasses.asdict(rules.DEFAULT_THRESHOLDS)
    )


# --- risk users ----------------------------------------------------------------------------


def risk_user_evaluate(*, customer: Customer, user_id: str, figures: RiskUser) -> bool:
    """Record whether the user is at risk (docs/reference/calibration.md, Risk users); fire
    risk_user.identified when they newly become so, at most once per user per 24 hours. Returns
    whether the event fired. A user already flagged costs one indexed read and no write."""
    if not rules.is_risk_user(figures):
        if figures["scored_decisions"] >= rules.risk_min_decisions():
            _risk_user_cleared(customer, user_id=user_id, trust_score=figures["trust_score"])
        return False
    if selectors.risk_user_flagged(customer, user_id):
        return False
    now = timezone.now()
    with transaction.atomic():
        RiskUserState.objects.bulk_create(
            [RiskUserState(customer=customer, user_id=user_id)], ignore_conflicts=True
        )
        state = RiskUserState.objects.select_for_update().get(customer=customer, user_id=user_id)
        fire = not state.at_risk and (
            state.last_identified_at is None or now - state.last_identified_at >= dt.timedelta(hours=24)
        )
        state.at_risk = True
        state.trust_score = figures["trust_score"]
        state.updated_at = now
        if fire:
            state.last_identified_at = now
            event_emit(
                customer=customer,
                type="risk_user.identified",
                data={
                    "user_id": user_id,
                    "trust_score": figures["trust_score"],
                    "reliance_gap": figures["reliance_gap"],
                    "risk_level": figures["risk_level"],
                    "category": figures["category"],
                    "decisions": figures["decisions"],
                    "scored_decisions": figures["scored_decisions"],
                    "overtrust_rate": figures["overtrust_rate"],
                    "undertrust_rate": figures["undertrust_rate"],
                    "window_days": rules.window_days(),
                },
            )
        state.save()
    return fire


# A user no longer at risk: every POST /calibrate of a user with enough decisions who is not at
# risk sends it, so its text is fixed (prepared on PostgreSQL), not compiled by the ORM each time.
_CLEARED_SQL = (
    f"UPDATE {RiskUserState._meta.db_table} SET at_risk = %s, trust_score = %s, updated_at = %s"  # noqa: S608 (the model's table; values are parameters)
    " WHERE customer_id = %s AND user_id = %s AND at_risk"
)


def _risk_user_cleared(customer: Customer, *, user_id: str, trust_score: float | None) -> None:
    """The user's flag cleared if set, with the score that cleared it."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    params = [False, trust_score, now, customer.pk, user_id]
    with prepared.cursor() if connection.vendor == "postgresql" else connection.cursor() as cursor:
        cursor.execute(_CLEARED_SQL, params)


def risk_users_refresh(*, customer: Customer, at_risk: Sequence[ListedRiskUser]) -> None:
    """Organization scope: fire for users newly at risk, clear users who recovered. The users
    already flagged are read in one statement; only a newly flagged one costs more."""
    at_risk_ids = {row["user_id"] for row in at_risk}
    flagged = set(
        RiskUserState.objects.filter(customer=customer, at_risk=True).values_list("user_id", flat=True)
    )
    for row in at_risk:
        if row["user_id"] not in flagged:
            risk_user_evaluate(customer=customer, user_id=row["user_id"], figures=row)
    recovered = flagged - at_risk_ids
    if recovered:
        RiskUserState.objects.filter(customer=customer, at_risk=True, user_id__in=recovered).update(
            at_risk=False, updated_at=timezone.now()
        )


# --- thresholds ----------------------------------------------------------------------------


def watched_figure(figures: Figures, name: str) -> float | None:
    """The figure a threshold watches (one of Threshold.Figure: each a rate or a score)."""
    watched: dict[str, float | None] = {
        "override_rate": figures["override_rate"],
        "agreement_rate": figures["agreement_rate"],
        "overtrust_rate": figures["overtrust_rate"],
        "undertrust_rate": figures["undertrust_rate"],
        "trust_score": figures["trust_score"],
        "calibration_gap": figures["calibration_gap"],
        "mean_ai_confidence": figures["mean_ai_confidence"],
    }
    return watched[name]


def threshold_check(*, threshold: Threshold, today: dt.date | None = None) -> bool:
    """Compare the figure over the threshold's window; fire threshold.breached once per
    breach (until the figure recovers). Returns whether the event fired."""
    days = selectors.DayRange.last_days(threshold.window_days, today=today)
    figures = selectors.organization_figures(
        threshold.customer, days=days, model_id=threshold.model_id or None
    )
    observed = watched_figure(figures, threshold.figure)
    now = timezone.now()
    fired = False
    with transaction.atomic():
        locked = Threshold.objects.select_for_update().get(pk=threshold.pk)
        locked.last_checked_at = now
        locked.last_value = observed
        if observed is None or figures["decisions"] < max(1, locked.min_decisions):
            locked.save(update_fields=["last_checked_at", "last_value"])
            return False
        breached = locked.is_breached_by(observed)
        if breached and not locked.breached:
            locked.breached = True
            locked.breached_at = now
            fired = True
            event_emit(
                customer=locked.customer,
                type="threshold.breached",
                data={
                    "threshold_id": locked.pk,
                    "name": locked.name or None,
                    "figure": locked.figure,
                    "comparison": locked.comparison,
                    "threshold": locked.value,
                    "observed": observed,
                    "window_days": locked.window_days,
                    "model_id": locked.model_id or None,
                    "decisions": figures["decisions"],
                    "window": days.as_dict(),
                },
            )
        elif not breached and locked.breached:
            locked.breached = False
        locked.save(update_fields=["last_checked_at", "last_value", "breached", "breached_at"])
    threshold.refresh_from_db()
    return fired


def thresholds_check_all(*, today: dt.date | None = None) -> dict[str, int]:
    """Every active threshold, then risk users of the customers active today."""
    checked = fired = 0
    for threshold in Threshold.objects.filter(is_active=True).select_related("customer").order_by("pk"):
        checked += 1
        try:
            fired += threshold_check(threshold=threshold, today=today)
        except Exception:  # one broken threshold must not stop the others
            logger.exception("threshold %s check failed", threshold.pk)
    day = today or timezone.now().date()
    active = (
        UserDailyAggregate.objects.filter(model_key=ALL_MODELS, day=day)
        .order_by()
        .values_list("customer_id", flat=True)
        .distinct()
    )
    days = selectors.DayRange.last_days(rules.window_days(), today=day)
    for customer in Customer.objects.filter(pk__in=list(active)):
        risk_users_refresh(customer=customer, at_risk=selectors.risk_users(customer, days=days))
    return {"checked": checked, "fired": fired}
