"""The service's own chain recomputed offline (docs/reference/drift.md, Verifying a chart
offline): monitors of every chart fed through POST /log, /log/batch and late outcomes, with an
acknowledgement, a pause and an h change, then `offline_verify --drift` on the export and every
monitor's series agrees point by point, entry by entry; a series changed by one point does not."""

import io
import json
import random

import pytest

from audit import offline_verify

pytestmark = pytest.mark.django_db(transaction=True)
PROBE = {"kind": "known_wrong", "correct_decision": "deny"}


def body(decision_id: str, rng: random.Random, *, user: str, c: float | None, **more) -> dict:
    followed = rng.random() < (0.2 + 0.7 * (c if c is not None else 0.5))
    out = {
        "decision_id": decision_id, "user_id": user, "model_id": "loan", "ai_recommendation": "approve",
        "ai_confidence": c, "user_decision": "approve" if followed else "deny",
    }  # fmt: skip
    out.update(more)
    return {k: v for k, v in out.items() if v is not None}


def create(api, **monitor) -> str:
    response = api.post("/v1/drift-monitors", monitor, format="json")
    assert response.status_code == 201, response.content
    return response.json()["monitor_id"]


def series_pages(api, monitor_id: str) -> list[dict]:
    pages, page = [], 1
    while True:
        answer = api.get(f"/v1/drift-monitors/{monitor_id}/series", {"page": page, "limit": 40}).json()
        pages.append(answer)
        if len(answer["data"]) < 40:
            return pages
        page += 1


def test_every_chart_of_the_service_is_recomputed_from_its_export(api, tmp_path):
    rng = random.Random(7)
    history = [body(f"h-{i}", rng, user="rev-1", c=round(rng.uniform(0.1, 0.95), 2)) for i in range(80)]
    assert api.post("/v1/log/batch", {"decisions": history}, format="json").status_code == 200
    monitors = {
        "previous": create(api, chart="over_reliance", scope="user", user_id="rev-1",
                           baseline={"mode": "previous", "decisions": 60}, h=1.5),
        "next": create(api, chart="under_reliance", scope="organization", model_id="loan",
                       baseline={"mode": "next", "decisions": 50}, h=1.2),
        "ai": create(api, chart="ai_calibration_up", scope="organization", h=1.0),
        "sprt": create(api, chart="probe_sprt", scope="user", user_id="rev-2"),
    }  # fmt: skip
    for round_ in range(6):
        items = [
            body(f"r{round_}-{i}", rng, user=rng.choice(["rev-1", "rev-2"]), c=round(rng.uniform(0.05, 0.95), 2),
                 outcome=rng.choice(["approve", "deny", None]))
            for i in range(30)
        ]  # fmt: skip
        items += [body(f"p{round_}-{i}", rng, user="rev-2", c=0.8, probe=PROBE) for i in range(4)]
        assert api.post("/v1/log/batch", {"decisions": items}, format="json").status_code == 200
        for i in range(5):  # single writes and late outcomes
            api.post("/v1/log", body(f"s{round_}-{i}", rng, user="rev-1", c=0.3), format="json")
            api.post("/v1/log", {"decision_id": f"s{round_}-{i}", "outcome": "deny"}, format="json")
        if round_ == 2:
            for alarm in api.get("/v1/drift-alarms", {"status": "open"}).json()["data"][:2]:
                response = api.post(
                    f"/v1/drift-alarms/{alarm['alarm_id']}/acknowledge",
                    {"disposition": "false_alarm"},
                    format="json",
                )
                assert response.status_code == 200, response.content
        if round_ == 3:
            api.patch(f"/v1/drift-monitors/{monitors['ai']}", {"enabled": False}, format="json")
        if round_ == 4:
            api.patch(f"/v1/drift-monitors/{monitors['ai']}", {"enabled": True, "h": 2.0}, format="json")
            api.patch(f"/v1/drift-monitors/{monitors['previous']}", {"h": 2.5}, format="json")
    alarms = api.get("/v1/drift-alarms", {"limit": 100}).json()["data"]
    assert len(alarms) >= 3, "the scenario raises alarms to check"
    export = tmp_path / "export.ndjson"
    export.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    files = []
    for name, monitor_id in monitors.items():
        files.append(tmp_path / f"{name}.json")
        files[-1].write_text(json.dumps(series_pages(api, monitor_id)))
    out = io.StringIO()
    status = offline_verify.main(["--drift", str(export), *map(str, files)], out)
    text = out.getvalue()
    assert status == 0, text
    assert text.count("OK: monitor") == 4 and "4 monitor(s) recomputed" in text
    # one point of one series changed: named, exit 1
    pages = json.loads(files[0].read_text())
    pages[0]["data"][3]["x"] = round(pages[0]["data"][3]["x"] + 0.01, 6)
    files[0].write_text(json.dumps(pages))
    out = io.StringIO()
    assert offline_verify.main(["--drift", str(export), *map(str, files)], out) == 1
    assert f"series point {pages[0]['data'][3]['index']}: x is" in out.getvalue()
