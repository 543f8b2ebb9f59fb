"""Writes for trust calibration: the daily aggregates (inside the decision's transaction),
trust.miscalibrated, risk_user.identified and threshold.breached."""

import datetime as dt
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from calibration import rules, selectors
from calibration.models import ALL_MODELS, RiskUserState, Threshold, UserDailyAggregate
from keys.models import Customer
from webhooks.services import event_emit

logger = logging.getLogger("trustcal.calibration")

_TABLE = UserDailyAggregate._meta.db_table
_KEY_COLUMNS = ["customer_id", "user_id", "model_key", "day"]


def aggregates_apply(
    *, customer_id: str, user_id: str, model_id: str | None, day: dt.date, delta: Mapping[str, float]
) -> None:
    """Add `delta` to the user's row for `day` (all models) and, when the decision names a
    model, to that model's row: one INSERT ... ON CONFLICT DO UPDATE (PostgreSQL and SQLite)."""
    if not delta:
        return
    q = connection.ops.quote_name
    columns = _KEY_COLUMNS + rules.SUM_FIELDS
    model_keys = [ALL_MODELS] + ([model_id] if model_id else [])
    row_sql = "(" + ", ".join(["%s"] * len(columns)) + ")"
    params: list[Any] = []
    for key in model_keys:
        params += [customer_id, user_id, key, day]
        params += [delta.get(name, 0) for name in rules.SUM_FIELDS]
    # Only fixed column names are interpolated (from rules.SUM_FIELDS); values are parameters.
    updates = ", ".join(f"{q(name)} = {q(_TABLE)}.{q(name)} + excluded.{q(name)}" for name in sorted(delta))
    table, cols = q(_TABLE), ", ".join(q(c) for c in columns)
    rows, conflict = ", ".join([row_sql] * len(model_keys)), ", ".join(q(c) for c in _KEY_COLUMNS)
    sql = f"INSERT INTO {table} ({cols}) VALUES {rows} ON CONFLICT ({conflict}) DO UPDATE SET {updates}"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _decision_day(decision: Any) -> dt.date:
    return decision.timestamp.astimezone(dt.UTC).date()


def _miscalibrated_event(*, decision: Any, entry_id: str | None, source: str) -> None:
    event_emit(
        customer=decision.customer,
        type="trust.miscalibrated",
        data={
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


def calibration_on_decision_logged(
    *, decision: Any, entry_id: str | None = None, source: str = "log"
) -> None:
    """Called by audit's decision service inside its transaction."""
    aggregates_apply(
        customer_id=decision.customer_id,
        user_id=decision.user_id,
        model_id=decision.model_id,
        day=_decision_day(decision),
        delta=rules.contribution(rules.Record.of(decision)),
    )
    if decision.calibration_category in rules.MISCALIBRATED:
        _miscalibrated_event(decision=decision, entry_id=entry_id, source=source)


def calibration_on_outcome_changed(
    *, decision: Any, previous_outcome: str | None, previous_category: str, entry_id: str | None = None
) -> None:
    """A late outcome: move the decision's counts from its old state to the new one."""
    old = rules.contribution(rules.Record.of(decision, outcome=previous_outcome, category=previous_category))
    new = rules.contribution(rules.Record.of(decision))
    aggregates_apply(
        customer_id=decision.customer_id,
        user_id=decision.user_id,
        model_id=decision.model_id,
        day=_decision_day(decision),
        delta=rules.delta(new, old),
    )
    if (
        decision.calibration_category in rules.MISCALIBRATED
        and decision.calibration_category != previous_category
    ):
        _miscalibrated_event(decision=decision, entry_id=entry_id, source="outcome")


# --- risk users ----------------------------------------------------------------------------


def is_at_risk(figures: Mapping[str, Any]) -> bool:
    score = figures.get("trust_score")
    return (
        figures.get("decisions", 0) >= rules.risk_user_min_decisions()
        and score is not None
        and score < rules.risk_high_below()
    )


def risk_user_evaluate(*, customer: Customer, user_id: str, figures: Mapping[str, Any]) -> bool:
    """Record whether the user is at risk; fire risk_user.identified when they newly enter
    high risk, at most once per user per 24 hours. Returns whether the event fired.
    A user already flagged costs one indexed read and no write."""
    if not is_at_risk(figures):
        if figures.get("decisions", 0) >= rules.risk_user_min_decisions():
            RiskUserState.objects.filter(customer=customer, user_id=user_id, at_risk=True).update(
                at_risk=False, trust_score=figures.get("trust_score"), updated_at=timezone.now()
            )
        return False
    if RiskUserState.objects.filter(customer=customer, user_id=user_id, at_risk=True).exists():
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
        state.trust_score = figures.get("trust_score")
        state.updated_at = now
        if fire:
            state.last_identified_at = now
            event_emit(
                customer=customer,
                type="risk_user.identified",
                data={
                    "user_id": user_id,
                    "trust_score": figures.get("trust_score"),
                    "risk_level": "high",
                    "category": figures.get("category"),
                    "decisions": figures.get("decisions"),
                    "overtrust_rate": figures.get("overtrust_rate"),
                    "undertrust_rate": figures.get("undertrust_rate"),
                    "window_days": rules.window_days(),
                },
            )
        state.save()
    return fire


def risk_users_refresh(*, customer: Customer, at_risk: Sequence[Mapping[str, Any]]) -> None:
    """Organization scope: fire for users newly at risk, clear users who recovered."""
    at_risk_ids = {row["user_id"] for row in at_risk}
    for row in at_risk:
        risk_user_evaluate(customer=customer, user_id=row["user_id"], figures=row)
    RiskUserState.objects.filter(customer=customer, at_risk=True).exclude(user_id__in=at_risk_ids).update(
        at_risk=False, updated_at=timezone.now()
    )


# --- thresholds ----------------------------------------------------------------------------


def threshold_check(*, threshold: Threshold, today: dt.date | None = None) -> bool:
    """Compare the figure over the threshold's window; fire threshold.breached once per
    breach (until the figure recovers). Returns whether the event fired."""
    days = selectors.DayRange.last_days(threshold.window_days, today=today)
    figures = selectors.organization_figures(
        threshold.customer, days=days, model_id=threshold.model_id or None
    )
    observed = figures.get(threshold.figure)
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
