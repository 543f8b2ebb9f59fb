"""The OpenAPI schema is what integrators generate clients from. This test generates a typed
client from /v1/schema with openapi-python-client and drives the main flows through it, in
process (httpx's WSGI transport, so the test database applies). It fails when an answer has a
status the schema does not document, does not parse into its documented model, or carries a
field the model does not declare."""

import datetime as dt
import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client

from tests.conftest import make_key

BIN = Path(sys.executable).parent
PACKAGE = "trustcal_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Any:
    folder = tmp_path_factory.mktemp("generated")
    schema = Client().get("/v1/schema", {"format": "json"})
    assert schema.status_code == 200
    (folder / "schema.json").write_bytes(schema.content)
    subprocess.run(
        [str(BIN / "openapi-python-client"), "generate", "--path", str(folder / "schema.json"),
         "--meta", "none", "--output-path", str(folder / PACKAGE)],
        check=True, capture_output=True, env={"PATH": f"{BIN}:/usr/bin:/bin"},
    )  # fmt: skip
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def undocumented(value: Any, where: str = "$") -> list[str]:
    """Fields an answer carried that its model does not declare. A model that declares no field
    at all is a free-form object by design (subgroups, metadata, rates keyed by outcome)."""
    found: list[str] = []
    if attrs.has(type(value)):
        declared = [f for f in attrs.fields(type(value)) if f.name != "additional_properties"]
        extra = getattr(value, "additional_properties", {})
        if declared:
            found += [f"{where}.{name}" for name in extra]
        for field in declared:
            found += undocumented(getattr(value, field.name), f"{where}.{field.name}")
        if not declared:
            for name, item in extra.items():
                found += undocumented(item, f"{where}.{name}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += undocumented(item, f"{where}[{index}]")
    return found


@pytest.fixture
def in_process_requests():
    """The WSGI app in this thread keeps the test's database connection open, as Django's test
    client does (a finished request would close it otherwise)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


class Driver:
    """Calls the generated functions and checks every answer."""

    def __init__(self, client_module: Any, key: str) -> None:
        self.package = client_module
        self.client = client_module.AuthenticatedClient(
            base_url="http://testserver",
            token=key,
            raise_on_unexpected_status=True,
            httpx_args={"transport": httpx.WSGITransport(app=get_wsgi_application())},
        )
        self.calls = 0

    def model(self, dotted: str) -> Any:
        module, name = dotted.rsplit(".", 1)
        return getattr(importlib.import_module(f"{PACKAGE}.models.{module}"), name)

    def body(self, dotted: str, data: dict) -> Any:
        return self.model(dotted).from_dict(data)

    def call(self, endpoint: str, status: int, **kwargs: Any) -> Any:
        module = importlib.import_module(f"{PACKAGE}.api.{endpoint}")
        response = module.sync_detailed(client=self.client, **kwargs)
        self.calls += 1
        assert response.status_code == status, (endpoint, response.status_code, response.content[:500])
        parsed = response.parsed
        assert parsed is not None, (endpoint, "the answer did not parse into a documented model")
        extra = undocumented(parsed)
        assert extra == [], (endpoint, type(parsed).__name__, extra)
        return parsed


@pytest.mark.django_db
def test_a_client_generated_from_the_schema_drives_the_main_flows(generated, settings, in_process_requests):
    settings.WEBHOOK_ALLOW_INSECURE_URLS = True
    d = Driver(generated, make_key("acme", "enterprise").value)
    today = dt.date.today().isoformat()
    decision = {
        "decision_id": "loan-1", "user_id": "officer-7", "model_id": "credit-v3",
        "ai_recommendation": "approve", "ai_confidence": 0.35, "user_decision": "approve",
        "context": "small business loan", "subgroups": {"gender": "female", "age_group": "35-44"},
    }  # fmt: skip
    logged = d.call(
        "log.log_decision", 201, body=d.body("decision_input_request.DecisionInputRequest", decision)
    )
    assert (
        logged.calibration_category.value == "OVERTRUSTING"
        if hasattr(logged.calibration_category, "value")
        else True
    )
    d.call("log.log_decision", 200, body=d.body("decision_input_request.DecisionInputRequest", decision))
    d.call(
        "log.log_decision", 201,
        body=d.body("late_outcome_input_request.LateOutcomeInputRequest", {"decision_id": "loan-1", "outcome": "deny"}),
    )  # fmt: skip
    items = [
        {**decision, "decision_id": f"loan-{i}", "subgroups": {"gender": "male" if i % 2 else "female"}}
        for i in range(2, 42)
    ]
    batch = d.call(
        "log.log_decision_batch",
        200,
        body=d.body("log_batch_input_request.LogBatchInputRequest", {"decisions": items}),
    )
    assert batch.accepted == 40
    d.call(
        "calibrate.calibrate", 200,
        body=d.body("decision_input_request.DecisionInputRequest",
                    {"user_id": "officer-7", "ai_recommendation": "deny", "user_decision": "approve", "confidence": 0.92}),
    )  # fmt: skip
    d.call(
        "trust_score.trust_score",
        200,
        body=d.body("trust_score_input_request.TrustScoreInputRequest", {"user_id": "officer-7"}),
    )
    d.call(
        "trust_score.trust_score", 200, body=d.body("trust_score_input_request.TrustScoreInputRequest", {})
    )
    d.call("trust_score.trust_score_trend", 200, user_id="officer-7")
    d.call("audit_trail.audit_trail_list", 200, user_id="officer-7", limit=5)
    d.call("audit_trail.audit_trail_verify_retrieve", 200)
    d.call(
        "detect_bias.detect_bias_create", 200,
        body=d.body("detect_bias_input_request.DetectBiasInputRequest", {"decision_id": "loan-3", "subgroups": {"gender": "male"}}),
    )  # fmt: skip
    d.call("bias.bias_subgroups_retrieve", 200, attribute="gender")
    d.call("bias.bias_feed_list", 200)
    signal_body = {
        "externalToolId": "fairlearn", "externalToolVersion": "0.15.0", "modelId": "credit-v3",
        "metricName": "demographic_parity", "metricValue": 0.2, "threshold": 0.1, "passesThreshold": False,
        "protectedAttribute": "gender", "privilegedGroup": "male", "unprivilegedGroup": "female",
        "sampleSize": 40, "rawPayload": {"difference": 0.2},
        "signalTimestamp": (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)).isoformat(),
    }  # fmt: skip
    signal = d.call(
        "model_fairness_signals.model_fairness_signals_create",
        201,
        body=d.body("signal_input_request.SignalInputRequest", signal_body),
    )
    d.call("model_fairness_signals.model_fairness_signals_list", 200)
    d.call("model_fairness_signals.model_fairness_signals_retrieve", 200, id=signal.id)
    d.call("bias.bias_amplification_list", 200)
    hook = d.call(
        "webhooks.webhooks_create", 201,
        body=d.body("webhook_create_input_request.WebhookCreateInputRequest",
                    {"url": "http://127.0.0.1:9/hook", "events": ["*"], "description": "ops"}),
    )  # fmt: skip
    d.call("webhooks.webhooks_list", 200)
    d.call("webhooks.webhooks_deliveries_list", 200, id=hook.webhook_id)
    d.call("export.export_templates", 200)
    export = d.call(
        "export.export_create", 202,
        body=d.body("export_input_request.ExportInputRequest",
                    {"template": "eu_ai_act", "format": "json", "time_period": {"from": today, "to": today}}),
    )  # fmt: skip
    d.call("export.export_retrieve", 200, id=export.export_id)
    d.call("exports.exports_list", 200)
    d.call("health.health_retrieve", 200)
    d.call("engines.engines_status_retrieve", 200)
    d.call("metrics.metrics_retrieve", 200)
    assert d.calls == 27


def test_the_schema_explains_behaviour_without_internal_references():
    """Descriptions are read by integrators: no references to documents they do not have
    (codes of the customer's specification) nor to the service's modules (event names such as audit.required stay)."""
    text = Client().get("/v1/schema", {"format": "json"}).content.decode()
    apps = "audit|bias|calibration|compliance|config|console|fairness|keys|webhooks"
    kinds = "inputs|services|selectors|models|views|serializers|rules|domain|batch|append|records|engine|api"
    internal = re.findall(rf"\bC\d{{1,2}}\b|interface\.md|\b\w+/\w+\.py\b|\b(?:{apps})\.(?:{kinds})\b", text)
    assert internal == []
