"""The automatic calibration of a `next` baseline (docs/reference/drift.md, Calibration): the
write that completes the baseline answers with the monitor `calibrating` and holds no Monte
Carlo; a worker calibrates once, appends its entry and the chart starts after it; a second or
duplicated run changes nothing; a claim whose worker died is sent again by the sweep; the chart
with its gap is recomputed offline."""

import datetime as dt
import io
import json

import pytest
from django.utils import timezone

from audit import offline_verify
from audit.models import AuditEntry
from drift import calibrating as jobs
from drift import services
from drift.models import DriftMonitor
from tests.drift.test_offline_end_to_end import series_pages
from webhooks.models import Event

pytestmark = pytest.mark.django_db(transaction=True)


def decision(i: int, *, c: float, followed: bool) -> dict:
    return {"decision_id": f"d-{i}", "user_id": "rev-1", "model_id": "loan", "ai_recommendation": "approve",
            "ai_confidence": c, "user_decision": "approve" if followed else "deny"}  # fmt: skip


def baseline_items(start: int = 0, count: int = 50) -> list[dict]:
    return [decision(start + i, c=0.3 if i % 2 else 0.9, followed=i % 3 != 0) for i in range(count)]


@pytest.fixture
def calibrating(api):
    """A monitor whose `next` baseline of 50 completed in a batch that answered before any
    calibration: (monitor id, the batch's last sequence)."""
    response = api.post(
        "/v1/drift-monitors",
        {"chart": "over_reliance", "scope": "user", "user_id": "rev-1", "arl0_target": 200, "seed": 7,
         "runs": 1000, "baseline": {"mode": "next", "decisions": 50}},
        format="json",
    )  # fmt: skip
    assert response.status_code == 201, response.content
    monitor_id = response.json()["monitor_id"]
    assert api.post("/v1/log/batch", {"decisions": baseline_items()}, format="json").status_code == 200
    return monitor_id


def test_the_write_that_completes_the_baseline_answers_calibrating(api, calibrating):
    monitor = api.get(f"/v1/drift-monitors/{calibrating}").json()
    assert monitor["status"] == "calibrating" and monitor["h"] is None and monitor["calibration"] is None
    assert monitor["baseline"]["completed_at"] is not None
    assert not AuditEntry.objects.filter(type="drift_monitor.calibrated").exists()
    # decisions meanwhile are no points of the chart
    assert api.post("/v1/log", decision(100, c=0.3, followed=True), format="json").status_code == 201
    assert api.get(f"/v1/drift-monitors/{calibrating}/series").json()["data"] == []


def test_a_worker_calibrates_once_and_the_chart_starts_after_its_entry(api, calibrating, tmp_path):
    for i in range(3):  # the gap: not charted
        api.post("/v1/log", decision(100 + i, c=0.3, followed=True), format="json")
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is True
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is False  # a duplicate
    entries = AuditEntry.objects.filter(type="drift_monitor.calibrated")
    assert entries.count() == 1
    monitor = api.get(f"/v1/drift-monitors/{calibrating}").json()
    assert monitor["status"] == "live" and monitor["h_source"] == "calibrated"
    assert monitor["calibration"]["entry_sequence"] == entries.get().sequence
    assert monitor["calibration"]["seed"] == 7 and monitor["calibration"]["runs"] == 1000
    event = Event.objects.get(type="drift_monitor.calibrated").data
    assert event["source"] == "automatic" and event["h"] == monitor["h"]
    for i in range(5):
        api.post("/v1/log", decision(200 + i, c=0.3, followed=True), format="json")
    points = api.get(f"/v1/drift-monitors/{calibrating}/series").json()["data"]
    assert [p["index"] for p in points] == [1, 2, 3, 4, 5]
    assert points[0]["restart"] is True and points[0]["sequence"] > entries.get().sequence
    # the same chart, gap and all, recomputed from the export
    export = tmp_path / "export.ndjson"
    export.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    series = tmp_path / "series.json"
    series.write_text(json.dumps(series_pages(api, calibrating)))
    out = io.StringIO()
    assert offline_verify.main(["--drift", str(export), str(series)], out) == 0, out.getvalue()
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_a_held_claim_is_left_alone_and_an_expired_one_is_sent_again(calibrating, monkeypatch):
    assert jobs._calibration_claim(calibrating) == 1  # a worker took it, then died
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is False
    sent: list[str] = []
    monkeypatch.setattr(jobs, "_calibration_enqueue", sent.append)
    assert jobs.calibrations_recover() == 0  # its lease still runs
    DriftMonitor.objects.filter(pk=calibrating).update(
        calibration_lease_until=timezone.now() - dt.timedelta(seconds=1)
    )
    assert jobs.calibrations_recover() == 1 and sent == [calibrating]
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is True
    monitor = DriftMonitor.objects.get(pk=calibrating)
    assert monitor.status == "live" and monitor.calibration_attempts == 2
    assert monitor.calibration_lease_until is None
    assert jobs.calibrations_recover() == 0


def test_an_unclaimed_calibration_is_sent_again_by_the_sweep(calibrating, monkeypatch):
    """The message the write sent was lost: the monitor is calibrating and nobody holds it."""
    sent: list[str] = []
    monkeypatch.setattr(jobs, "_calibration_enqueue", sent.append)
    assert jobs.calibrations_recover() == 1 and sent == [calibrating]


def test_h_given_or_a_pause_meanwhile_wins_over_the_worker(api, calibrating, monkeypatch):
    assert (
        api.patch(f"/v1/drift-monitors/{calibrating}", {"enabled": False}, format="json").status_code == 200
    )
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is False
    sent: list[str] = []
    monkeypatch.setattr(jobs, "_calibration_enqueue", sent.append)
    patched = api.patch(f"/v1/drift-monitors/{calibrating}", {"enabled": True}, format="json").json()
    assert patched["status"] == "calibrating" and sent == [calibrating]  # enabled again: sent again
    patched = api.patch(f"/v1/drift-monitors/{calibrating}", {"h": 3}, format="json").json()
    assert patched["status"] == "live" and patched["h_source"] == "given"
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is False
    assert not AuditEntry.objects.filter(type="drift_monitor.calibrated").exists()


def test_the_write_sends_the_calibration_when_it_commits(api, monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(jobs, "_calibration_enqueue", sent.append)
    monitor_id = api.post(
        "/v1/drift-monitors",
        {"chart": "over_reliance", "scope": "organization", "arl0_target": 200,
         "baseline": {"mode": "next", "decisions": 50}},
        format="json",
    ).json()["monitor_id"]  # fmt: skip
    assert (
        api.post("/v1/log/batch", {"decisions": baseline_items(count=49)}, format="json").status_code == 200
    )
    assert sent == []
    assert api.post("/v1/log", decision(49, c=0.9, followed=True), format="json").status_code == 201
    assert sent == [monitor_id]


def test_beat_sends_the_sweep():
    from django.conf import settings

    from config.celery import app
    from drift.tasks import calibrations_recover

    entry = app.conf.beat_schedule["drift-calibrations-recover"]
    assert entry["task"] == "drift.tasks.calibrations_recover"
    assert entry["schedule"] == settings.DRIFT_CALIBRATION_RECOVER_SECONDS
    assert calibrations_recover.name == entry["task"]


def test_a_calibrate_request_simulates_holding_no_lock(api, calibrating, monkeypatch):
    """POST /calibrate runs its Monte Carlo outside any transaction (so the customer's chain head
    is not locked meanwhile) and locks it only to append its entry."""
    from django.db import connection

    compute = jobs.calibration_compute
    seen: list[bool] = []

    def watched(*args, **kwargs):
        seen.append(connection.in_atomic_block)
        return compute(*args, **kwargs)

    monkeypatch.setattr(services, "calibration_compute", watched)
    answer = api.post(f"/v1/drift-monitors/{calibrating}/calibrate", {"seed": 1, "runs": 1000}, format="json")
    assert answer.status_code == 200, answer.content
    assert seen == [False] and answer.json()["applied"] is True
    entry = AuditEntry.objects.get(type="drift_monitor.calibrated")
    assert answer.json()["entry_sequence"] == entry.sequence
    assert Event.objects.get(type="drift_monitor.calibrated").data["source"] == "request"
    assert jobs.monitor_calibrate_automatic(monitor_id=calibrating) is False  # the request won
    dry = api.post(f"/v1/drift-monitors/{calibrating}/calibrate", {"seed": 1, "runs": 1000, "apply": False},
                   format="json").json()  # fmt: skip
    assert dry["applied"] is False and dry["entry_sequence"] is None and dry["h"] == answer.json()["h"]
    assert AuditEntry.objects.filter(type="drift_monitor.calibrated").count() == 1
