"""Every request body is a pydantic model (docs/reference/conventions.md, Request bodies): the
model validates it, builds its VALIDATION_ERROR document and is what /v1/schema shows.
The subgroups object follows one rule wherever it is sent (docs/reference/bias.md, Subgroups)."""

from pathlib import Path

import pytest
from django.test import Client

from audit.models import Decision
from config import bodymodels
from tests.conftest import assert_problem

ROOT = Path(__file__).resolve().parents[2]
DECISION = {"user_id": "u1", "ai_recommendation": "approve", "user_decision": "approve"}


def _refs(node) -> set[str]:
    """The component names a schema fragment refers to, however deep."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.add(ref.rsplit("/", 1)[-1])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _components_of(schema: dict, names: set[str]) -> set[str]:
    """`names` and every component they refer to."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_refs(schema["components"]["schemas"][name]))
    return seen


def _models() -> dict[str, type[bodymodels.BodyModel]]:
    return {model.__name__: model for model in bodymodels.models_of()}


def _request_bodies(schema: dict) -> set[str]:
    found: set[str] = set()
    for operations in schema["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                found |= _refs(operation["requestBody"])
    return found


def _not_models(schema: dict) -> set[str]:
    """The components of request bodies that are not a body model's own JSON schema.
    drf-spectacular names a request body `<Model>Request` (`Patched<Model>Request` for a PATCH);
    a nested model keeps its own name, and the values of a choice become a `...Enum`. POST
    /log's body (LogRequestRequest) is one of two models."""
    components = schema["components"]["schemas"]
    models = _models()
    found: set[str] = set()
    for name in _components_of(schema, _request_bodies(schema)):
        component = components[name]
        if name == "LogRequestRequest" and _refs(component) == {
            "DecisionInputRequest",
            "LateOutcomeInputRequest",
        }:
            continue
        if name.endswith("Enum") and "enum" in component:
            continue
        model = models.get(name.removeprefix("Patched").removesuffix("Request"))
        wire = model.model_json_schema(by_alias=True, mode="serialization") if model else {}
        if set(component.get("properties", {})) != set(wire.get("properties", ())) or not wire:
            found.add(name)
    return found


@pytest.mark.django_db
def test_every_request_body_in_the_schema_is_a_body_model():
    schema = Client().get("/v1/schema", {"format": "json"}).json()
    assert _request_bodies(schema), "no request body found in the schema"
    assert _not_models(schema) == set()
    for name in ("DecisionInputRequest", "SubgroupsInput", "SignalInputRequest", "ExportInputRequest"):
        assert name in schema["components"]["schemas"]


@pytest.mark.django_db
def test_a_request_body_made_by_a_serializer_is_found():
    """The check above can fail: an operation whose body is a DRF serializer's component
    (the problem document's) is named."""
    schema = Client().get("/v1/schema", {"format": "json"}).json()
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    schema["paths"]["/v1/test-only"] = {"post": {"requestBody": {"content": content}}}
    assert _not_models(schema) == {"Problem", "ProblemFieldError"}


def test_no_view_validates_a_body_with_a_serializer():
    """Views call config.bodymodels.body_parse; a DRF serializer never validates a request body."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("*/views.py")
        if ".venv" not in path.parts and ".is_valid(" in path.read_text()
    ]
    assert offenders == []


HOSTILE_SUBGROUPS = {"gender": "   ", "custom": {"   ": "x", "region": 3}, "planet": "mars"}
EXPECTED_FIELDS = ["subgroups.planet", "subgroups.gender", "subgroups.custom.   ", "subgroups.custom.region"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/v1/log", "/v1/calibrate", "/v1/detect-bias"])
def test_subgroups_are_refused_by_the_same_rule_on_every_endpoint_with_every_problem_listed(api, path):
    body = {**DECISION, "decision_id": "d-1", "subgroups": HOSTILE_SUBGROUPS}
    if path == "/v1/detect-bias":
        body = {"decision_id": "d-1", "subgroups": HOSTILE_SUBGROUPS}
    problem = assert_problem(api.post(path, body, format="json"), 400, "VALIDATION_ERROR")
    assert [e["field"] for e in problem["errors"]] == EXPECTED_FIELDS
    assert Decision.objects.count() == 0


@pytest.mark.django_db
def test_subgroup_values_and_keys_are_trimmed_when_a_decision_is_logged(api):
    sent = {"gender": " female ", "custom": {" region ": "north  "}, "ethnicity": None, "age_group": "35-44"}
    response = api.post("/v1/log", {**DECISION, "decision_id": "d-1", "subgroups": sent}, format="json")
    assert response.status_code == 201, response.content
    expected = {"gender": "female", "age_group": "35-44", "custom": {"region": "north"}}
    assert response.json()["subgroups"] == expected
    entry = api.get("/v1/audit-trail", {"decision_id": "d-1"}).json()["data"][0]
    assert entry["subgroups"] == expected
    # The same decision sent again, with the values as they were sent, is a replay.
    again = api.post("/v1/log", {**DECISION, "decision_id": "d-1", "subgroups": sent}, format="json")
    assert again.status_code == 200


@pytest.mark.django_db
def test_a_validation_error_lists_every_problem_of_the_body_with_its_path(api):
    body = {
        "user_id": 7,
        "ai_recommendation": "",
        "ai_confidence": 1.5,
        "probe": {"kind": "sometimes", "extra": 1},
        "metadata": [],
    }
    problem = assert_problem(api.post("/v1/log", body, format="json"), 400, "VALIDATION_ERROR")
    assert [e["field"] for e in problem["errors"]] == [
        "user_id",
        "ai_recommendation",
        "ai_confidence",
        "user_decision",
        "metadata",
        "probe.extra",
        "probe.kind",
        "probe.correct_decision",
    ]
    assert problem["detail"] == "; ".join(f"{e['field']}: {e['message']}" for e in problem["errors"][:5])
