"""A seeded dataset logged over HTTP, and the worker's step run in-process (the tests with
real Celery workers are in test_workers.py)."""

import datetime as dt
from typing import Any

from compliance import services

USERS = ["ana", "ben", "chloe"]


def at(days_ago: int, hour: int = 10) -> str:
    day = dt.datetime.now(dt.UTC).date() - dt.timedelta(days=days_ago)
    return dt.datetime.combine(day, dt.time(hour), tzinfo=dt.UTC).isoformat().replace("+00:00", "Z")


def decision(i: int, *, overtrust: bool = False, **overrides: Any) -> dict[str, Any]:
    """A decision with a confidence and a known outcome (docs/reference/calibration.md, Category of a decision):
    followed under 0.5 confidence and the AI wrong is OVERTRUSTING; else CALIBRATED (followed a confident
    AI that was right, or overrode an unsure AI that was wrong)."""
    ai = "approve" if i % 2 else "deny"
    other = "deny" if ai == "approve" else "approve"
    unsure, confident = round(0.05 + (i % 9) / 20, 2), round(0.55 + (i % 9) / 20, 2)
    if overtrust:
        user_decision, outcome, confidence = ai, other, unsure
    elif i % 5 == 0:
        user_decision, outcome, confidence = other, other, unsure  # overrode a wrong AI
    else:
        user_decision, outcome, confidence = ai, ai, confident
    body = {
        "decision_id": f"dec-{i}",
        "user_id": USERS[i % len(USERS)],
        "model_id": "loan-v1" if i % 4 else "loan-v2",
        "model_version": "2026.11",
        "ai_recommendation": ai,
        "ai_confidence": confidence,
        "user_decision": user_decision,
        "outcome": outcome,
        "context": f"application {i}, amount {1000 + i * 10} EUR",
        "timestamp": at(1 + i % 5),
    }
    body.update(overrides)
    return body


def seed(api, total: int, *, overtrust: int = 0, start: int = 0, **overrides: Any) -> list[dict[str, Any]]:
    """Log `total` decisions through POST /log/batch, the first `overtrust` of them OVERTRUSTING."""
    items = [decision(start + i, overtrust=i < overtrust, **overrides) for i in range(total)]
    for offset in range(0, len(items), 1000):
        r = api.post("/v1/log/batch", {"decisions": items[offset : offset + 1000]}, format="json")
        assert r.status_code == 200, r.content
        assert r.json()["rejected"] == 0, r.json()
    return items


def request_export(api, **body: Any) -> dict[str, Any]:
    body.setdefault("time_period", {"from": at(10)[:10], "to": at(0)[:10]})
    r = api.post("/v1/export", body, format="json")
    assert r.status_code == 202, r.content
    return r.json()


def render(api, export_id: str) -> dict[str, Any]:
    """What a worker does with the job, then the job as the API shows it."""
    services.export_run(export_id=export_id)
    r = api.get(f"/v1/export/{export_id}")
    assert r.status_code == 200, r.content
    return r.json()


def export_file(api, **body: Any) -> tuple[dict[str, Any], bytes]:
    job = render(api, request_export(api, **body)["export_id"])
    assert job["status"] == "completed", job
    r = api.get(job["download_url"])
    assert r.status_code == 200, r.content
    return job, b"".join(r.streaming_content)
