"""Properties of the chain (docs/reference/erasure.md; docs/reference/decisions.md, "Numbers and
keys"): whatever interleaving of logging, batches, subgroup attachments, late outcomes and
erasures, GET /audit-trail/verify and the offline verifier agree and pass on the untampered
chain, checkpoints signed before an erasure included; and every value the API accepts
(numbers, strings of any Unicode, timestamps of any precision) leaves a chain that verifies,
online and offline."""

import datetime as dt
import io
import json
from itertools import count
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit import offline_verify, verify
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db

_run = count(1)
SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _both_verifiers(api, folder: Path, notes: list[dict]) -> tuple[bool, int]:
    """(online: the incremental answer and a full recheck agree on valid; offline exit status)."""
    incremental = api.get("/v1/audit-trail/verify").json()
    job = api.get("/v1/audit-trail/verify", {"full": "true"}).json()
    verify.verify_job_run(job_id=job["job_id"])
    full = api.get("/v1/audit-trail/verify", {"job_id": job["job_id"]}).json()["result"]
    assert incremental["valid"] == full["valid"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "key.txt").write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    args = ["--key", str(folder / "key.txt")]
    for number, made in enumerate(notes):
        (folder / f"c{number}.json").write_text(json.dumps(made))
        args += ["--checkpoint", str(folder / f"c{number}.json")]
    (folder / "export.ndjson").write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    out = io.StringIO()
    status = offline_verify.main([*args, "--jobs", "1", str(folder / "export.ndjson")], out=out)
    return full["valid"] and incremental["valid"], status


person = st.sampled_from(["s1", "s2", "s3", None])
reviewer = st.sampled_from(["r1", "r2", "r3"])
operation = st.one_of(
    st.tuples(st.just("log"), person, reviewer),
    st.tuples(st.just("batch"), person, reviewer),
    st.tuples(st.just("attach"), person, reviewer),
    st.tuples(st.just("outcome"), person, reviewer),
    st.tuples(st.just("checkpoint"), person, reviewer),
    st.tuples(st.just("erase_subject"), person, reviewer),
    st.tuples(st.just("erase_user"), person, reviewer),
)


@SETTINGS
@given(ops=st.lists(operation, min_size=3, max_size=12))
def test_any_interleaving_with_erasures_verifies_online_and_offline(tmp_path, ops):
    run = next(_run)
    api = client_for(make_key(f"prop-erasure-{run}", "enterprise").value)
    logged: list[str] = []
    notes: list[dict] = []
    for number, (kind, subject, user) in enumerate(ops):
        body = {
            "user_id": user,
            "ai_recommendation": "approve",
            "user_decision": "approve",
            "context": f"c{number}",
        }
        if subject is not None:
            body["subject_id"] = subject
        if kind == "log":
            response = api.post("/v1/log", {**body, "decision_id": f"d{number}"}, format="json")
            assert response.status_code == 201, response.content
            logged.append(f"d{number}")
        elif kind == "batch":
            items = [
                {**body, "decision_id": f"d{number}-{i}", "subgroups": {"gender": "f"}} for i in range(2)
            ]
            assert api.post("/v1/log/batch", {"decisions": items}, format="json").json()["rejected"] == 0
            logged += [item["decision_id"] for item in items]
        elif kind == "attach" and logged:
            attached = {"decision_id": logged[-1], "subgroups": {"gender": "m", "age_group": "18-30"}}
            assert api.post("/v1/detect-bias", attached, format="json").status_code == 200
        elif kind == "outcome" and logged:
            late = {"decision_id": logged[0], "outcome": f"o{number}"}
            assert api.post("/v1/log", late, format="json").status_code in (200, 201)
        elif kind == "checkpoint":
            made = api.post("/v1/audit-trail/checkpoints")
            if made.status_code in (200, 201):
                notes.append(made.json())
        elif kind in ("erase_subject", "erase_user"):
            target = {"subject_id": subject or "s1"} if kind == "erase_subject" else {"user_id": user}
            request = {
                **target,
                "reason": "asked",
                "legal_basis": "gdpr_art_17_1_a",
                "override_minimum": True,
            }
            assert api.post("/v1/erasures", request, format="json").status_code in (200, 202)
    made = api.post("/v1/audit-trail/checkpoints")
    if made.status_code in (200, 201):
        notes.append(made.json())
    if not notes:
        return  # an empty chain: nothing to sign
    online, offline_status = _both_verifiers(api, tmp_path / f"run{run}", notes)
    assert online is True and offline_status == 0


# Timestamps of every precision the API takes: seconds to nanoseconds, Z or an offset.
def _timestamp(moment: dt.datetime, digits: int, offset_minutes: int) -> str:
    zone = dt.timezone(dt.timedelta(minutes=offset_minutes))
    text = moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{moment.microsecond:06d}{moment.microsecond % 1000:03d}"[:digits]
    return text + (
        "Z"
        if offset_minutes == 0
        else moment.astimezone(zone).strftime("%z")[:3] + ":" + moment.astimezone(zone).strftime("%z")[3:]
    )


values = st.fixed_dictionaries(
    {
        "ai_confidence": st.one_of(
            st.none(), st.floats(0, 1), st.sampled_from([-0.0, 0.0, 1.0, 5e-324, 1e-7])
        ),
        "review_seconds": st.one_of(st.none(), st.floats(0, 86_400), st.just(-0.0)),
        "context": st.text(max_size=40),
        "user_id": st.text(min_size=1, max_size=20),
        "subject_id": st.one_of(st.none(), st.text(min_size=1, max_size=20)),
        "custom": st.dictionaries(
            st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8), max_size=3
        ),
        "moment": st.datetimes(
            min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2030, 1, 1), timezones=st.just(dt.UTC)
        ),
        "digits": st.integers(0, 9),
        "offset": st.sampled_from([0, 60, -330, 840]),
    }
)


@SETTINGS
@given(items=st.lists(values, min_size=1, max_size=4))
def test_every_value_the_api_accepts_leaves_a_chain_that_verifies(tmp_path, items):
    run = next(_run)
    api = client_for(make_key(f"prop-values-{run}", "enterprise").value)
    stored = 0
    for item in items:
        body = {
            "user_id": item["user_id"],
            "ai_recommendation": "approve",
            "user_decision": "approve",
            "context": item["context"],
            "subgroups": {"custom": item["custom"]} if item["custom"] else {},
            "timestamp": _timestamp(item["moment"], item["digits"], item["offset"]),
        }
        for name in ("ai_confidence", "review_seconds", "subject_id"):
            if item[name] is not None:
                body[name] = item[name]
        text = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8", "surrogatepass")
        response = api.generic("POST", "/v1/log", text, content_type="application/json")
        assert response.status_code in (201, 400), response.content
        stored += response.status_code == 201
    if not stored:
        return
    made = api.post("/v1/audit-trail/checkpoints").json()
    online, offline_status = _both_verifiers(api, tmp_path / f"run{run}", [made])
    assert online is True and offline_status == 0
