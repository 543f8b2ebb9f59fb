"""The calibration of a monitor's h (docs/reference/drift.md, Calibration): the Monte Carlo on the
monitor's stored baseline, its application (an entry, h, a restart), and the automatic calibration
of a `next` baseline, which a worker runs after the write that completed the baseline commits.
Behind drift.services, which answers POST /drift-monitors/{id}/calibrate."""

import datetime as dt
import functools

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet

from audit.services import chain_lock
from config.jsondoc import JSONObject
from config.leases import LeaseRenewal
from config.timeutils import isoformat
from drift import trail
from drift.baselines import case_mix
from drift.calibration import calibrate
from drift.charts import PROBE_SPRT
from drift.engine import restart
from drift.models import DriftMonitor, DriftPoint
from drift.wire import state_of, state_set


def status_of(monitor: DriftMonitor) -> str:
    """The status a monitor's configuration gives it: paused, collecting its baseline, calibrating
    (no h yet; a probe SPRT needs none) or live."""
    if not monitor.enabled:
        return DriftMonitor.Status.PAUSED
    baseline = monitor.baseline
    if baseline and baseline.get("completed_at") is None:
        return DriftMonitor.Status.BASELINE
    if monitor.h is None and monitor.chart != PROBE_SPRT:
        return DriftMonitor.Status.CALIBRATING
    return DriftMonitor.Status.LIVE


def calibration_compute(
    monitor: DriftMonitor, *, arl0_target: int, runs: int, seed: int
) -> dict[str, float | int]:
    """The calibration's figures on the monitor's stored baseline (reads only; no lock)."""
    confidences = list(
        DriftPoint.objects.filter(monitor=monitor, baseline=True).values_list("ai_confidence", flat=True)
    )
    result = calibrate(
        case_mix(monitor, [c for c in confidences if c is not None]),
        odds_ratio=monitor.odds_ratio or 2.0,
        arl0_target=arl0_target,
        runs=runs,
        seed=seed,
    )
    return result.figures()


# JSON values
def calibration_apply(monitor: DriftMonitor, figures: dict[str, float | int], *, source: str) -> JSONObject:
    """Apply computed figures to a monitor locked with its chain head: its entry, its h, and a
    restart of its chart. The answer of POST /calibrate."""
    now = dt.datetime.now(dt.UTC)
    data: JSONObject = {"monitor_id": monitor.pk, "chart": monitor.chart, "user_id": monitor.user_id,
            "model_id": monitor.model_id, "source": source, **figures}  # fmt: skip
    record = trail.Record(trail.CALIBRATED, monitor.pk, data, user_id=monitor.user_id)
    trail.records_append(monitor.customer, [record], at=now)
    answer: JSONObject = {"monitor_id": monitor.pk, "chart": monitor.chart, **figures, "applied": True,
                          "entry_sequence": record.sequence, "calibrated_at": isoformat(now)}  # fmt: skip
    state = state_of(monitor)
    restart(state)
    monitor.h, monitor.h_source, monitor.arl0_target = figures["h"], "calibrated", int(figures["arl0_target"])
    monitor.calibration = answer
    state_set(monitor, state)
    monitor.status = status_of(monitor)
    monitor.calibration_lease_until = None
    monitor.updated_at = now
    monitor.save()
    return answer


# The automatic calibration of a `next` baseline (docs/reference/drift.md, Calibration): the
# write that completes the baseline leaves the monitor `calibrating` and sends its calibration
# to a worker once it commits. The monitor row is the truth: a worker claims it under a lease
# (renewed while the Monte Carlo runs), and beat sends again the calibration of a monitor whose
# lease ran out (its worker died) or that was never claimed (its message was lost).
def calibration_send(monitor_id: str) -> None:
    """Ask a worker to calibrate the monitor once the current transaction commits."""
    transaction.on_commit(functools.partial(_calibration_enqueue, monitor_id), robust=True)


def _calibration_enqueue(monitor_id: str) -> None:
    from drift.tasks import monitor_calibrate_automatic as task

    task.delay(monitor_id)


def _calibrating() -> QuerySet[DriftMonitor]:
    return DriftMonitor.objects.filter(status=DriftMonitor.Status.CALIBRATING, deleted_at__isnull=True)


def _lease_end() -> dt.datetime:
    return dt.datetime.now(dt.UTC) + dt.timedelta(seconds=settings.DRIFT_CALIBRATION_LEASE_SECONDS)


def _calibration_claim(monitor_id: str) -> int | None:
    """Take the monitor's automatic calibration if it is calibrating and nobody holds it (or its
    holder's lease ran out): the claim's attempt number, else None."""
    now = dt.datetime.now(dt.UTC)
    with transaction.atomic():
        monitor = (
            _calibrating()
            .select_for_update()
            .filter(pk=monitor_id)
            .filter(Q(calibration_lease_until__isnull=True) | Q(calibration_lease_until__lt=now))
            .first()
        )
        if monitor is None:
            return None
        monitor.calibration_attempts += 1
        monitor.calibration_lease_until = _lease_end()
        monitor.save(update_fields=["calibration_attempts", "calibration_lease_until"])
        return monitor.calibration_attempts


def _lease(monitor_id: str, attempt: int) -> LeaseRenewal:
    """Holds the claim while the Monte Carlo runs: the lease is renewed every third of its
    length, so a long calibration keeps its monitor and a killed worker loses it."""

    def renew() -> None:
        _calibrating().filter(pk=monitor_id, calibration_attempts=attempt).update(
            calibration_lease_until=_lease_end()
        )

    return LeaseRenewal(f"drift monitor {monitor_id}", settings.DRIFT_CALIBRATION_LEASE_SECONDS / 3, renew)


def monitor_calibrate_automatic(*, monitor_id: str) -> bool:
    """Calibrate a `calibrating` monitor with its own target, seed and runs, and apply it: the
    Monte Carlo runs holding no lock; the chain head is locked only to append the entry. Safe to
    run twice: a monitor that is no longer calibrating (calibrated, given an h, paused, deleted)
    or that another worker holds is left alone. True when this call applied the calibration."""
    attempt = _calibration_claim(monitor_id)
    if attempt is None:
        return False
    monitor = DriftMonitor.objects.get(pk=monitor_id)
    assert monitor.arl0_target is not None
    with _lease(monitor_id, attempt):
        figures = calibration_compute(
            monitor, arl0_target=monitor.arl0_target, runs=monitor.runs, seed=monitor.seed
        )
    with transaction.atomic():
        chain_lock(monitor.customer_id)
        monitor = DriftMonitor.objects.select_for_update().select_related("customer").get(pk=monitor_id)
        if (
            monitor.status != DriftMonitor.Status.CALIBRATING
            or monitor.deleted_at is not None
            or monitor.h is not None
            or monitor.arl0_target != figures["arl0_target"]
        ):
            return False
        calibration_apply(monitor, figures, source="automatic")
    return True


def calibrations_recover() -> int:
    """Beat: send again the calibration of every calibrating monitor that no worker holds (never
    claimed, or its lease ran out). A message still in flight is harmless twice: one claim wins."""
    now = dt.datetime.now(dt.UTC)
    ids = list(
        _calibrating()
        .filter(Q(calibration_lease_until__isnull=True) | Q(calibration_lease_until__lt=now))
        .values_list("pk", flat=True)[:100]
    )
    for monitor_id in ids:
        _calibration_enqueue(monitor_id)
    return len(ids)
