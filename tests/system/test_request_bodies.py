"""Every request body is declared once (docs/reference/conventions.md, Request bodies): that
declaration validates it, builds its VALIDATION_ERROR document and is what /v1/schema shows.
The subgroups object follows one rule wherever it is sent (docs/reference/bias.md, Subgroups)."""

from pathlib import Path

import pytest
from django.test import Client

from audit.models import Decision
from config import bodies, bodymodels
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


@pytest.mark.django_db
def test_every_request_body_in_the_schema_is_a_declared_body():
    schema = Client().get("/v1/schema", {"format": "json"}).json()
    bodies_used: set[str] = set()
    for operations in schema["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                bodies_used |= _refs(operation["requestBody"])
    assert bodies_used, "no request body found in the schema"
    # drf-spectacular names a request body `<Name>Request` (`Patched<Name>Request` for a PATCH)
    # and a choice field's values `...Enum`; POST /log's body is one of two declared bodies.
    declared = set(bodies._SERIALIZERS) | {model.__name__ for model in bodymodels.models_of()}
    components = _components_of(schema, bodies_used)
    undeclared = {
        name
        for name in components
        if name.removeprefix("Patched").removesuffix("Request") not in declared
        and not name.endswith("Enum")
        and name != "LogRequestRequest"
    }
    assert not undeclared, f"request bodies not built from a declaration: {sorted(undeclared)}"
    for name in ("DecisionInputRequest", "SubgroupsInput", "SignalInputRequest", "ExportInputRequest"):
        assert name in components


def test_no_view_validates_a_body_with_a_serializer():
    """Views call config.bodies.parse; a DRF serializer never validates a request body."""
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
