"""Automatic calibration on real Celery workers (docs/reference/drift.md, Calibration): the
write that completes a `next` baseline answers `calibrating` and a worker appends the
calibration; a worker SIGKILLed mid-calibration leaves a monitor that beat sends again and
another worker calibrates, once."""

import time

import pytest

from audit.models import AuditEntry
from drift.models import DriftMonitor
from tests.drift.test_calibration_automatic import baseline_items
from tests.processes import celery_worker
from tests.webhooks.test_workers import _kill_tree, _wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def create(api, arl0_target: int, runs: int) -> str:
    response = api.post(
        "/v1/drift-monitors",
        {"chart": "over_reliance", "scope": "user", "user_id": "rev-1", "arl0_target": arl0_target,
         "runs": runs, "seed": 3, "baseline": {"mode": "next", "decisions": 50}},
        format="json",
    )  # fmt: skip
    assert response.status_code == 201, response.content
    return response.json()["monitor_id"]


def status(api, monitor_id: str) -> str:
    return api.get(f"/v1/drift-monitors/{monitor_id}").json()["status"]


def test_a_worker_calibrates_after_the_write_answers(transactional_db, api):
    monitor_id = create(api, 200, 1000)
    with celery_worker("drift", concurrency=1):
        assert api.post("/v1/log/batch", {"decisions": baseline_items()}, format="json").status_code == 200
        _wait_for(lambda: status(api, monitor_id) == "live", 60, "the automatic calibration")
    entry = AuditEntry.objects.get(type="drift_monitor.calibrated")
    monitor = api.get(f"/v1/drift-monitors/{monitor_id}").json()
    assert monitor["calibration"]["entry_sequence"] == entry.sequence
    assert monitor["h_source"] == "calibrated" and monitor["h"] == monitor["calibration"]["h"]


def test_a_worker_killed_mid_calibration_leaves_a_monitor_another_calibrates(transactional_db, api):
    # ARL0 100,000: seconds of Monte Carlo, time enough to kill the worker holding it
    monitor_id = create(api, 100_000, 1000)
    fast = {
        "TRUSTCAL_DRIFT_CALIBRATION_LEASE_SECONDS": "3",
        "TRUSTCAL_DRIFT_CALIBRATION_RECOVER_SECONDS": "1",
    }
    claimed = DriftMonitor.objects.filter(pk=monitor_id, calibration_attempts=1)
    with celery_worker("victim", concurrency=1, **fast) as proc:
        assert api.post("/v1/log/batch", {"decisions": baseline_items()}, format="json").status_code == 200
        deadline = time.monotonic() + 60
        while not claimed.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert claimed.exists(), "the victim did not claim the calibration"
        _kill_tree(proc.pid)
        proc.wait(10)
    monitor = DriftMonitor.objects.get(pk=monitor_id)
    assert monitor.status == "calibrating" and monitor.calibration_attempts == 1
    assert not AuditEntry.objects.filter(type="drift_monitor.calibrated").exists()
    with celery_worker("rescuer", beat=True, concurrency=1, **fast):
        _wait_for(lambda: status(api, monitor_id) == "live", 240, "the second attempt")
    monitor.refresh_from_db()
    assert monitor.calibration_attempts == 2 and monitor.h_source == "calibrated"
    assert AuditEntry.objects.filter(type="drift_monitor.calibrated").count() == 1
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True
