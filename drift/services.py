"""Writes of the drift monitors and alarms (docs/reference/drift.md, The API). Each write locks
the customer's chain head first (audit.services.chain_lock), as the decision pipeline holds it
when it advances the charts, then the rows it changes, then appends its entries."""

import datetime as dt
import secrets
from typing import Any

from django.db import transaction

from audit.services import chain_followers_set, chain_lock
from config.exceptions import NotFound
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from drift import trail
from drift.baselines import baseline_complete
from drift.calibrating import calibration_apply, calibration_compute, calibration_send, status_of
from drift.charts import AI_CALIBRATION_CHARTS, PROBE_SPRT
from drift.engine import acknowledged, restart
from drift.exceptions import (
    DriftAlarmAlreadyAcknowledged,
    DriftBaselineIncomplete,
    DriftBaselineTooShort,
    DriftMonitorLimitReached,
    DriftNotCalibratable,
)
from drift.inputs import NAME_MAX, AcknowledgeInput, CalibrateInput, MonitorCreateInput, MonitorUpdateInput
from drift.models import DriftAlarm, DriftMonitor, DriftPoint
from drift.previous import previous_points
from drift.wire import SPRT_DEFAULTS, state_of, state_set
from keys.models import Customer

MONITORS_MAX = 50
SEED_MAX = 2**53 - 1


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


# JSON values
def configured_data(monitor: DriftMonitor, action: str, changes: list[str]) -> JSONObject:
    baseline = monitor.baseline
    return {
        "monitor_id": monitor.pk,
        "action": action,
        "changes": changes,
        "chart": monitor.chart,
        "scope": monitor.scope,
        "user_id": monitor.user_id,
        "model_id": monitor.model_id,
        "model_version": monitor.model_version,
        "odds_ratio": monitor.odds_ratio,
        "h": monitor.h,
        "h_source": monitor.h_source,
        "arl0_target": monitor.arl0_target,
        "baseline": None
        if baseline is None
        else {"mode": baseline["mode"], "decisions": baseline["decisions"]},
        "sprt": monitor.sprt,
        "seed": monitor.seed,
        "runs": monitor.runs,
        "enabled": monitor.enabled,
    }


def _configured(monitor: DriftMonitor, action: str, changes: list[str]) -> trail.Record:
    data = configured_data(monitor, action, changes)
    return trail.Record(trail.CONFIGURED, monitor.pk, data, user_id=monitor.user_id)


def _baseline_of(body: MonitorCreateInput) -> JSONObject | None:
    if body.chart == PROBE_SPRT:
        return None
    if body.baseline is not None:
        chosen = body.baseline
    elif body.chart in AI_CALIBRATION_CHARTS and body.arl0_target is None:
        return None  # with h and no baseline the chart starts at once
    else:
        from drift.inputs import BaselineIn

        chosen = BaselineIn()
    return {"mode": chosen.mode, "decisions": chosen.decisions, "collected": 0, "first_sequence": None,
            "last_sequence": None, "completed_at": None, "entry_sequence": None, "fit": None}  # fmt: skip


def default_name(chart: str, user_id: str | None) -> str:
    """`<chart> <user_id or organization>`, cut to the name's 200 characters (a user id may
    have 256)."""
    return f"{chart} {user_id or 'organization'}"[:NAME_MAX]


def _new_monitor(
    customer: Customer, body: MonitorCreateInput, baseline: JSONObject | None, now: dt.datetime
) -> DriftMonitor:
    return DriftMonitor(
        customer=customer,
        name=body.name or default_name(body.chart, body.user_id),
        chart=body.chart,
        scope=body.scope,
        user_id=body.user_id,
        model_id=body.model_id,
        model_version=body.model_version,
        odds_ratio=None if body.chart == PROBE_SPRT else float(body.odds_ratio or 2.0),
        h=None if body.h is None else body.h,
        h_source="given" if body.h is not None else None,
        arl0_target=body.arl0_target,
        seed=body.seed if body.seed is not None else secrets.randbelow(SEED_MAX + 1),
        runs=body.runs,
        baseline=baseline,
        sprt=(body.sprt.model_dump() if body.sprt else dict(SPRT_DEFAULTS))
        if body.chart == PROBE_SPRT
        else None,
        enabled=body.enabled,
        status=DriftMonitor.Status.BASELINE if baseline else DriftMonitor.Status.LIVE,
        configured_sequence=0,
        created_at=now,
        updated_at=now,
    )


@transaction.atomic
def monitor_create(
    *, customer: Customer, body: MonitorCreateInput, at: dt.datetime | None = None
) -> DriftMonitor:
    """Create a monitor; a `previous` baseline is fitted (and calibrated with arl0_target)
    before it answers. A refused request stores and appends nothing. `at` backdates it
    (seed_demo's history; not reachable from the API)."""
    chain_lock(customer.pk)
    if DriftMonitor.objects.filter(customer=customer, deleted_at__isnull=True).count() >= MONITORS_MAX:
        raise DriftMonitorLimitReached(f"A customer has at most {MONITORS_MAX} monitors.")
    now = at or _now()
    baseline = _baseline_of(body)
    monitor = _new_monitor(customer, body, baseline, now)
    if not body.enabled:
        monitor.status = DriftMonitor.Status.PAUSED
    points: list[tuple[float | None, int, int, Any]] = []
    if baseline and baseline["mode"] == "previous":
        points = previous_points(monitor, baseline["decisions"])
        if len(points) < baseline["decisions"]:
            raise DriftBaselineTooShort(
                f"The baseline needs {baseline['decisions']} eligible points before the monitor; there are {len(points)}."
            )
    records = [_configured(monitor, "created", [])]
    trail.records_append(customer, records, at=now)
    monitor.configured_sequence = records[0].sequence or 0
    if points:
        monitor.baseline = dict(monitor.baseline or {})
        done, monitor.status = baseline_complete(
            monitor, monitor.baseline, [(c, e, s) for c, e, s, _ in points], at=now
        )
        if not body.enabled:
            monitor.status = DriftMonitor.Status.PAUSED
        trail.records_append(customer, [done], at=now)
        monitor.baseline = {**(monitor.baseline or {}), "entry_sequence": done.sequence}
    monitor.save(force_insert=True)
    if points:
        DriftPoint.objects.bulk_create(
            [
                DriftPoint(
                    monitor=monitor,
                    baseline=True,
                    sequence=s,
                    decision_id=ref[0],
                    user_id=ref[1],
                    timestamp=ref[2],
                    ai_confidence=c,
                    event=e,
                )
                for c, e, s, ref in points
            ],
            batch_size=500,
        )
        if monitor.arl0_target is not None:
            _calibrated(monitor, arl0_target=monitor.arl0_target, runs=monitor.runs, seed=monitor.seed,
                        source="automatic")  # fmt: skip
    if monitor.enabled:
        followers_count(customer.pk)
    return monitor


def followers_count(customer_id: str) -> None:
    """The chain head's count of the customer's enabled monitors, after a change of one, under
    the head's lock: a write of a customer with none reads no monitor (docs/reference/drift.md,
    Processing in the write)."""
    enabled = DriftMonitor.objects.filter(customer_id=customer_id, deleted_at__isnull=True, enabled=True)
    chain_followers_set(customer_id, enabled.count())


def _lock(monitor: DriftMonitor) -> DriftMonitor:
    chain_lock(monitor.customer_id)
    return DriftMonitor.objects.select_for_update().get(pk=monitor.pk)


@transaction.atomic
def monitor_update(*, monitor: DriftMonitor, body: MonitorUpdateInput) -> DriftMonitor:
    monitor = _lock(monitor)
    sent = body.sent()
    if "h" in sent and monitor.chart == PROBE_SPRT:
        from config.bodymodels import failure

        raise failure([{"field": "h", "message": "is not taken by probe_sprt"}])
    for name in ("name", "enabled", "h"):
        if name in sent and sent[name] is None:
            from config.bodymodels import failure

            raise failure([{"field": name, "message": "must not be null"}])
    changes = sorted(name for name, value in sent.items() if getattr(monitor, name) != value)
    if "h" in sent and monitor.h_source != "given":
        changes = sorted({*changes, "h"})
    if not changes:
        return monitor
    state = state_of(monitor)
    was_enabled = monitor.enabled
    for name in changes:
        setattr(monitor, name, sent[name])
    if "h" in changes:
        monitor.h_source, monitor.arl0_target, monitor.calibration = "given", None, None
        restart(state)
        if monitor.status == DriftMonitor.Status.CALIBRATING:
            monitor.status = DriftMonitor.Status.LIVE
    if "enabled" in changes:
        if monitor.enabled and not was_enabled:
            restart(state)
        monitor.status = status_of(monitor)
    state_set(monitor, state)
    monitor.updated_at = _now()
    trail.records_append(monitor.customer, [_configured(monitor, "updated", changes)], at=monitor.updated_at)
    monitor.save()
    if "enabled" in changes:
        followers_count(monitor.customer_id)
        if monitor.status == DriftMonitor.Status.CALIBRATING:  # paused while it was calibrating
            calibration_send(monitor.pk)
    return monitor


@transaction.atomic
def monitor_delete(*, monitor: DriftMonitor) -> None:
    monitor = _lock(monitor)
    monitor.deleted_at = monitor.updated_at = _now()
    trail.records_append(monitor.customer, [_configured(monitor, "deleted", [])], at=monitor.deleted_at)
    monitor.save()
    if monitor.enabled:
        followers_count(monitor.customer_id)


# JSON values
def _calibrated(monitor: DriftMonitor, *, arl0_target: int, runs: int, seed: int, source: str) -> JSONObject:
    figures = calibration_compute(monitor, arl0_target=arl0_target, runs=runs, seed=seed)
    return calibration_apply(monitor, figures, source=source)


# JSON values
def monitor_calibrate(*, monitor: DriftMonitor, body: CalibrateInput) -> JSONObject:
    """POST /calibrate. The Monte Carlo runs holding no lock (a monitor's baseline, fit and R_A
    never change once its baseline is complete); the chain head is locked only to append the
    entry and set h, so the customer's writes never wait on the simulation."""
    target = body.arl0_target if body.arl0_target is not None else monitor.arl0_target
    if target is None:
        from config.bodymodels import failure

        raise failure([{"field": "arl0_target", "message": "is required (the monitor has none)"}])
    monitor = DriftMonitor.objects.get(pk=monitor.pk)
    if monitor.chart == PROBE_SPRT:
        raise DriftNotCalibratable("A probe_sprt monitor has no h to calibrate.")
    baseline = monitor.baseline
    if baseline is None or baseline.get("completed_at") is None:
        raise DriftBaselineIncomplete("The monitor's baseline is not complete (or it has none).")
    seed = body.seed if body.seed is not None else secrets.randbelow(SEED_MAX + 1)
    figures = calibration_compute(monitor, arl0_target=target, runs=body.runs, seed=seed)
    if not body.apply:
        return {"monitor_id": monitor.pk, "chart": monitor.chart, **figures, "applied": False,
                "entry_sequence": None, "calibrated_at": None}  # fmt: skip
    with transaction.atomic():
        monitor = _lock(monitor)
        if monitor.deleted_at is not None:  # deleted while it was simulated
            raise NotFound("No drift monitor has that id.")
        return calibration_apply(monitor, figures, source="request")


@transaction.atomic
def alarm_acknowledge(
    *, alarm: DriftAlarm, body: AcknowledgeInput, default_by: str, at: dt.datetime | None = None
) -> DriftAlarm:
    """Acknowledge an open alarm; `at` backdates it (seed_demo's history; not reachable from
    the API)."""
    chain_lock(alarm.customer_id)
    alarm = DriftAlarm.objects.select_for_update().get(pk=alarm.pk)
    if alarm.status == DriftAlarm.Status.ACKNOWLEDGED:
        raise DriftAlarmAlreadyAcknowledged(f"Alarm {alarm.pk} is already acknowledged.")
    monitor = DriftMonitor.objects.select_for_update().get(pk=alarm.monitor_id)
    now = at or _now()
    alarm.status = DriftAlarm.Status.ACKNOWLEDGED
    alarm.acknowledged_at = now
    alarm.acknowledged_by = body.acknowledged_by or default_by
    alarm.disposition = body.disposition
    alarm.note = body.note
    data = {
        "alarm_id": alarm.pk,
        "monitor_id": monitor.pk,
        "chart": alarm.chart,
        "user_id": alarm.user_id,
        "disposition": alarm.disposition,
        "note": alarm.note,
        "acknowledged_by": alarm.acknowledged_by,
        "raised_at": isoformat(alarm.raised_at),
        "acknowledged_at": isoformat(now),
    }
    record = trail.Record(trail.ACKNOWLEDGED, alarm.pk, data, user_id=alarm.user_id, note=alarm.note)
    trail.records_append(alarm.customer, [record], at=now)
    alarm.acknowledgement_entry_sequence = record.sequence
    alarm.save()
    state = state_of(monitor)
    acknowledged(state)
    state_set(monitor, state)
    if monitor.open_alarm_id == alarm.pk:
        monitor.open_alarm_id = None
    monitor.save()
    return alarm
