"""Property: whatever JSON value, string or date is thrown at a write endpoint, the answer is a
2xx or a 4xx problem document, never a 5xx, and a 4xx stores nothing. Bodies are either any
JSON document or a valid body with one field replaced by an arbitrary value (which reaches
deeper than a body that fails at its first check). Strings include NUL, unpaired surrogates
and astral characters; dates include the ends of the calendar and offsets that leave it."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.models import AuditEntry, Decision
from bias.models import SubgroupAttachment
from fairness.models import AmplificationAlert, FairnessSignal
from keys.models import ApiKey
from webhooks.models import Event, Webhook

pytestmark = pytest.mark.django_db

PROFILE = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples in every run: CI is reproducible
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

strings = st.text(st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["", " ", "\x00", "\ud800", "a\udc00b", "\U0001f600", "x" * 300, "9999-12-31", "0001-01-01"]
)
dates = st.one_of(
    st.datetimes().map(lambda d: d.isoformat()),
    st.dates().map(str),
    st.sampled_from(
        [
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "10000-01-01",
            "2026-02-30",
            "2026-11-19T25:00:00Z",
            "1e9",
        ]
    ),
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | strings
    | dates
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(strings, inner, max_size=4),
    max_leaves=12,
)

DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "deny", "ai_confidence": 0.9}
SIGNAL = {
    "externalTool": "fairlearn",
    "modelId": "m1",
    "metricName": "demographic_parity_difference",
    "metricValue": 0.12,
    "protectedAttribute": "gender",
    "privilegedGroup": "male",
    "unprivilegedGroup": "female",
    "signalTimestamp": "2026-11-19T10:00:00Z",
}
WRITES = {
    "/v1/log": DECISION,
    "/v1/calibrate": DECISION,
    "/v1/detect-bias": {"decision_id": "d1", "subgroups": {"gender": "female"}},
    "/v1/trust-score": {"from": "2026-11-01", "to": "2026-11-19"},
    "/v1/model-fairness-signals": SIGNAL,
    "/v1/webhooks": {"url": "http://127.0.0.1:9/hook", "events": ["*"]},
}


def _counts() -> tuple[int, ...]:
    return tuple(
        model.objects.count()
        for model in (
            Decision,
            AuditEntry,
            SubgroupAttachment,
            FairnessSignal,
            AmplificationAlert,
            Webhook,
            Event,
            ApiKey,
        )
    )


def _body(base: dict, data) -> object:
    kind, field, value = data
    if kind == "any":
        return value
    body = dict(base)
    body[field if field in body else next(iter(body))] = value
    return body


def _check(client, method: str, path: str, body: object) -> None:
    before = _counts()
    raw = json.dumps(body, ensure_ascii=True, allow_nan=True)  # lone surrogates as \\udXXX escapes
    response = client.generic(method, path, raw, content_type="application/json")
    assert response.status_code < 500, (path, raw[:300], response.content[:300])
    if response.status_code >= 400:
        assert response["Content-Type"].startswith("application/problem+json"), (path, raw[:300])
        problem = response.json()
        assert problem["status"] == response.status_code and problem["code"]
        assert _counts() == before, (path, raw[:300])


def _mutations(base: dict):
    return st.tuples(st.sampled_from(["any", "field"]), st.sampled_from([*base, "extra"]), values)


@pytest.mark.parametrize("path", sorted(WRITES))
def test_write_endpoints_answer_2xx_or_a_4xx_problem_and_store_nothing_on_4xx(api, settings, path):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    settings.RATE_LIMITS_ENABLED = False

    @PROFILE
    @given(data=_mutations(WRITES[path]))
    def run(data):
        _check(api, "POST", path, _body(WRITES[path], data))

    run()


def test_patching_an_alert_or_a_webhook_answers_2xx_or_a_4xx_problem(api, settings):
    settings.RATE_LIMITS_ENABLED = False
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    hook = api.post("/v1/webhooks", WRITES["/v1/webhooks"], format="json").json()
    patches = {
        f"/v1/webhooks/{hook['webhook_id']}": {"url": "http://127.0.0.1:9/other", "events": ["*"]},
        "/v1/bias/amplification/amp_missing": {"status": "acknowledged"},
    }

    @PROFILE
    @given(path=st.sampled_from(sorted(patches)), data=_mutations({"status": 1, "url": 1, "events": 1}))
    def run(path, data):
        _check(api, "PATCH", path, _body(patches[path], data))

    run()


def test_creating_a_key_answers_2xx_or_a_4xx_problem(admin_api, settings):
    settings.RATE_LIMITS_ENABLED = False
    base = {"customer_id": "acme", "tier": "pilot", "description": "x"}

    @PROFILE
    @given(data=_mutations(base))
    def run(data):
        _check(admin_api, "POST", "/v1/admin/api-keys", _body(base, data))

    run()
