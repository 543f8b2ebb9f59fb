"""The low findings of a hostile review, each with its rule (the reference: erasure.md,
checkpoints.md, bias.md, errors.md under docs/reference): the offline verifier without `rfc8785` writes RFC 8785 text
itself; its --consistency and --report modes refuse deep files and duplicate keys with a reason;
the bias feed forgets an erased subject's decision; a 5,000-digit number is refused in the
service's words; custom subgroup keys that are the same once trimmed are refused; requested
checkpoints have a minimum interval."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import rfc8785
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from audit.hashing import standard_jcs
from audit.models import AuditEntry, Decision
from tests.audit.erasure_helpers import checkpoint, erase, export, log
from tests.audit.factories import decision_body
from tests.audit.test_checkpoint_tamper import REPO, offline
from tests.bias.factories import rated_groups, seed
from tests.conftest import assert_problem

# --- RFC 8785 in the standard library -----------------------------------------------------------

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)


@hypothesis_settings(max_examples=600, deadline=None)
@given(_json)
def test_the_standard_library_jcs_writes_what_the_rfc8785_package_writes(value):
    assert standard_jcs(value) == rfc8785.dumps(value).decode("utf-8")


@pytest.mark.parametrize(
    "number",
    [1e21, 1e20, 1e-7, 1e-6, 5e-324, 1.7976931348623157e308, 0.1, 100.0, 123.456, 1.5e-7, -0.0, 2.5e25],
)
def test_numbers_are_written_as_ecmascript_writes_them(number):
    assert standard_jcs(number) == rfc8785.dumps(number).decode("utf-8")
    assert math.isclose(float(standard_jcs(number)), number) or number == 0


def _offline_without_rfc8785(tmp_path: Path, *args: str) -> tuple[int, str]:
    """The auditor's command in a fresh interpreter where `import rfc8785` fails."""
    blocker = tmp_path / "no-rfc8785"
    blocker.mkdir(exist_ok=True)
    (blocker / "rfc8785.py").write_text("raise ImportError('rfc8785 is not installed here')\n")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(blocker)}
    done = subprocess.run(
        [sys.executable, "-m", "audit.offline_verify", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.django_db
def test_the_offline_verifier_without_rfc8785_checks_full_width_and_emoji_subgroup_keys(api, tmp_path):
    full_width = "\uff32\uff45\uff47\uff49\uff4f\uff4e"  # Region, in full-width letters
    keys = {full_width: "\uff4e", "\U0001f600": "smile", "zone\U00010000": "a", "\ue000": "b"}
    log(api, 2, subgroups={"gender": "female", "custom": keys})
    key, note = checkpoint(api, tmp_path)
    path = export(api, tmp_path)
    code, out = _offline_without_rfc8785(tmp_path, "--key", key, "--checkpoint", note, path)
    assert code == 0, out
    assert "Traceback" not in out
    # and a changed key still fails there
    text = Path(path).read_text(encoding="utf-8").replace("\\ud83d\\ude00", "\\ud83d\\ude01")
    text = text.replace("\U0001f600", "\U0001f601")
    Path(path).write_text(text, encoding="utf-8")
    code, out = _offline_without_rfc8785(tmp_path, "--key", key, "--checkpoint", note, path)
    assert code == 1 and "commitment" in out, out


# --- the offline verifier's other modes on hostile files ----------------------------------------


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.django_db
def test_consistency_and_report_modes_refuse_deep_files_and_duplicate_keys_with_a_reason(api, tmp_path):
    log(api, 2)
    key, note = checkpoint(api, tmp_path)
    path = export(api, tmp_path)
    hostile = {
        "deep.json": '{"first": 1, "second": 2, "hashes": ' + _deep(200_000) + "}",
        "twice.json": '{"first": 1, "second": 2, "hashes": [], "hashes": ["AAAA"]}',
    }
    for name, text in hostile.items():
        (tmp_path / name).write_text(text)
        code, out = offline("--key", key, "--consistency", note, note, "--proof", str(tmp_path / name))
        assert code == 2 and "Traceback" not in out, out
        assert "not a consistency proof" in out
    (tmp_path / "twice.json").write_text('{"template": "eu_ai_act", "sections": {}, "template": "texas"}')
    code, out = offline("--report", str(tmp_path / "twice.json"), path)
    assert code == 2 and "duplicate key 'template'" in out and "Traceback" not in out, out
    (tmp_path / "deep.json").write_text('{"template": "eu_ai_act", "sections": ' + _deep(200_000) + "}")
    code, out = offline("--report", str(tmp_path / "deep.json"), path)
    assert code == 2 and "Traceback" not in out, out


# --- the bias feed after a subject's erasure ----------------------------------------------------


@pytest.mark.django_db
def test_the_bias_feed_forgets_the_decision_of_an_erased_subject(api):
    seed("acme", rated_groups("gender", {"male": 0.8, "female": 0.4}, 60))
    alone = decision_body(subject_id="s-alone", user_decision="deny", ai_recommendation="deny")
    assert api.post("/v1/log", alone, format="json").status_code == 201
    detected = api.post(
        "/v1/detect-bias",
        {"decision_id": alone["decision_id"], "subgroups": {"gender": "female", "ethnicity": "only-one"}},
        format="json",
    ).json()
    assert detected["alert_id"] is not None
    assert api.get(f"/v1/bias/feed/{detected['alert_id']}").json()["decision_id"] == alone["decision_id"]
    assert erase(api, subject_id="s-alone").status_code == 202
    alert = api.get(f"/v1/bias/feed/{detected['alert_id']}").json()
    assert alert["decision_id"] is None
    assert alert["findings"] == detected["findings"]  # the figures stay
    assert all(a["decision_id"] != alone["decision_id"] for a in api.get("/v1/bias/feed").json()["data"])


# --- bodies: huge numbers, custom keys that collide ---------------------------------------------


@pytest.mark.django_db
def test_a_5000_digit_number_is_refused_in_the_services_words(api):
    number = "9" * 5000
    single = '{"decision_id": "d-big", "user_id": "u", "ai_recommendation": "a", "user_decision": "a", '
    single += f'"metadata": {{"n": {number}}}}}'
    for path, text in (("/v1/log", single), ("/v1/log/batch", '{"decisions": [' + single + "]}")):
        response = api.generic("POST", path, text, content_type="application/json")
        problem = assert_problem(response, 400, "INVALID_JSON")
        assert "more than 4,300 digits" in problem["detail"], problem
        assert "sys." not in problem["detail"] and "set_int_max_str_digits" not in problem["detail"]
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_custom_subgroup_keys_that_are_the_same_once_trimmed_are_refused(api):
    body = decision_body(subgroups={"custom": {"region": "north", " region ": "south"}})
    problem = assert_problem(api.post("/v1/log", body, format="json"), 400, "VALIDATION_ERROR")
    assert "same once trimmed" in json.dumps(problem), problem
    batch = api.post("/v1/log/batch", {"decisions": [body]}, format="json").json()
    assert batch["rejected"] == 1 and "same once trimmed" in json.dumps(batch)
    assert not AuditEntry.objects.exists()


# --- requested checkpoints ----------------------------------------------------------------------


@pytest.mark.django_db
def test_requested_checkpoints_have_a_minimum_interval(api, settings):
    settings.CHECKPOINT_MIN_SECONDS = 60
    log(api, 1)
    first = api.post("/v1/audit-trail/checkpoints")
    assert first.status_code == 201
    assert api.post("/v1/audit-trail/checkpoints").status_code == 200  # the chain has not grown
    log(api, 1)
    refused = assert_problem(api.post("/v1/audit-trail/checkpoints"), 429, "RATE_LIMIT_EXCEEDED")
    assert f"sequence {first.json()['sequence']}" in refused["detail"]
    response = api.post("/v1/audit-trail/checkpoints")
    assert 1 <= int(response["Retry-After"]) <= 60
    assert api.get("/v1/audit-trail/checkpoints").json()["pagination"]["total"] == 1
    settings.CHECKPOINT_MIN_SECONDS = 0
    assert api.post("/v1/audit-trail/checkpoints").status_code == 201
