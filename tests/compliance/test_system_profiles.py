"""System profiles (docs/reference/system-profiles.md): each model a customer's decisions name has
a profile, edited by API (PUT replaces, PATCH changes the fields sent) and in the staff console
through the same service, seen only by its customer, and printed in both report templates with
"not provided" and who can provide it where a field is empty."""

import io
import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pypdf import PdfReader

from compliance.models import PROFILE_FIELDS, SystemProfile
from tests.compliance.helpers import export_file, seed
from tests.conftest import assert_problem

pytestmark = pytest.mark.django_db

FULL = {
    "name": "Loan approval assistant",
    "purpose": "Recommends approving or declining consumer loan applications up to 50,000 EUR.",
    "deployment_context": "Retail branches; a loan officer reviews every recommendation before it takes effect.",
    "provider": "Acme Models Ltd",
    "version": "2026.11",
    "intended_reviewers": "Loan officers with the credit-risk training of their desk.",
}


def _text(content: bytes) -> str:
    return " ".join(
        " ".join((page.extract_text() or "").split()) for page in PdfReader(io.BytesIO(content)).pages
    )


def test_a_model_with_decisions_lists_with_an_empty_profile_until_one_is_written(api):
    seed(api, 8)  # models loan-v1 and loan-v2
    listed = api.get("/v1/system-profiles").json()
    assert [p["model_id"] for p in listed["data"]] == ["loan-v1", "loan-v2"]
    assert listed["pagination"]["total"] == 2
    empty = listed["data"][0]
    assert empty["not_provided"] == list(PROFILE_FIELDS) and empty["updated_at"] is None
    assert all(empty[name] == "" for name in PROFILE_FIELDS)

    r = api.put("/v1/system-profiles/loan-v1", FULL, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["not_provided"] == [] and r.json()["updated_by"].startswith("api:")
    again = api.put("/v1/system-profiles/loan-v1/", FULL, format="json")  # the optional trailing slash
    assert again.status_code == 200 and again.json()["model_id"] == "loan-v1"
    assert api.get("/v1/system-profiles/loan-v1").json()["name"] == FULL["name"]


def test_a_model_id_with_a_slash_or_a_space_is_addressed_in_the_path(api):
    for model_id, path in (("acme/credit v3", "acme%2Fcredit%20v3"), ("org/model", "org/model")):
        r = api.put(f"/v1/system-profiles/{path}", {"name": "x"}, format="json")
        assert r.status_code == 201, r.content
        assert r.json()["model_id"] == model_id
        assert api.get(f"/v1/system-profiles/{path}/").json()["name"] == "x"


def test_put_replaces_the_whole_profile_and_patch_changes_only_the_fields_sent(api):
    api.put("/v1/system-profiles/credit-v3", FULL, format="json")
    r = api.patch("/v1/system-profiles/credit-v3", {"version": "2026.12", "provider": None}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["version"] == "2026.12" and body["provider"] == "" and body["name"] == FULL["name"]
    assert body["not_provided"] == ["provider"]
    r = api.patch("/v1/system-profiles/credit-v3", {}, format="json")
    assert r.status_code == 200 and r.json()["version"] == "2026.12"
    r = api.put("/v1/system-profiles/credit-v3", {"name": "  Credit  "}, format="json")
    assert r.json()["name"] == "Credit" and r.json()["purpose"] == ""  # trimmed; left out: emptied
    assert r.json()["not_provided"] == [n for n in PROFILE_FIELDS if n != "name"]


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"name": 5}, "name", "must be a string"),
        ({"purpose": "x" * 2001}, "purpose", "must be at most 2000 characters"),
        ({"nmae": "typo"}, "nmae", "unknown field"),
        ({"version": ["1"]}, "version", "must be a string"),
    ],
)
@pytest.mark.parametrize("method", ["put", "patch"])
def test_a_wrong_body_is_a_validation_error_naming_the_field(api, method, body, field, message):
    r = getattr(api, method)("/v1/system-profiles/credit-v3", body, format="json")
    problem = assert_problem(r, 400, "VALIDATION_ERROR")
    assert problem["errors"][0]["field"] == field and problem["errors"][0]["message"].startswith(message)
    assert not SystemProfile.objects.exists()


def test_a_body_that_is_not_an_object_a_nul_or_an_overlong_model_id_is_a_4xx(api):
    assert_problem(api.put("/v1/system-profiles/credit-v3", [1], format="json"), 400, "VALIDATION_ERROR")
    r = api.put(
        "/v1/system-profiles/credit-v3", data=b'{"name": "a\\u0000b"}', content_type="application/json"
    )
    assert_problem(r, 400, "VALIDATION_ERROR")
    r = api.put("/v1/system-profiles/" + "m" * 257, {"name": "x"}, format="json")
    assert assert_problem(r, 400, "VALIDATION_ERROR")["errors"][0]["field"] == "model_id"
    assert_problem(api.get("/v1/system-profiles/a%01b"), 404, "NOT_FOUND")
    assert not SystemProfile.objects.exists()


def test_a_model_never_used_and_without_a_profile_is_not_found(api):
    assert_problem(api.get("/v1/system-profiles/unknown-model"), 404, "NOT_FOUND")


def test_a_customer_sees_and_edits_only_its_own_profiles(api, other_api):
    seed(api, 4)
    api.put("/v1/system-profiles/loan-v1", FULL, format="json")
    assert_problem(other_api.get("/v1/system-profiles/loan-v1"), 404, "NOT_FOUND")
    assert other_api.get("/v1/system-profiles").json()["data"] == []
    # The same model id in another organisation is that organisation's own profile.
    r = other_api.patch("/v1/system-profiles/loan-v1", {"name": "Theirs"}, format="json")
    assert r.status_code == 201 and r.json()["purpose"] == ""
    assert api.get("/v1/system-profiles/loan-v1").json()["name"] == FULL["name"]
    assert SystemProfile.objects.count() == 2


def test_a_customer_keeps_at_most_the_limit_of_profiles(api, monkeypatch):
    from compliance import profiles

    monkeypatch.setattr(profiles, "PROFILES_MAX", 2)
    for model_id in ("a", "b"):
        assert (
            api.put(f"/v1/system-profiles/{model_id}", {"name": model_id}, format="json").status_code == 201
        )
    assert_problem(api.put("/v1/system-profiles/c", {}, format="json"), 409, "SYSTEM_PROFILE_LIMIT_REACHED")
    assert api.patch("/v1/system-profiles/a", {"version": "2"}, format="json").status_code == 200


def test_staff_edit_a_profile_in_the_console_through_the_same_service(client, api):
    seed(api, 4)
    client.force_login(User.objects.create_superuser("officer", "officer@example.com", "pw"))
    r = client.post(
        "/admin/compliance/systemprofile/add/",
        {"customer": "acme", "model_id": "loan-v1", **FULL, "provider": ""},
    )
    assert r.status_code == 302, r.content.decode()[:3000]
    profile = api.get("/v1/system-profiles/loan-v1").json()
    assert profile["updated_by"] == "staff:officer" and profile["not_provided"] == ["provider"]
    stored = SystemProfile.objects.get()
    r = client.post(f"/admin/compliance/systemprofile/{stored.pk}/change/", {**FULL, "version": "2027.01"})
    assert r.status_code == 302, r.content.decode()[:3000]
    assert api.get("/v1/system-profiles/loan-v1").json()["version"] == "2027.01"
    listing = client.get("/admin/compliance/systemprofile/").content.decode()
    assert "6 of 6" in listing and "staff:officer" in listing and "UTC" in listing


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_both_templates_print_each_models_profile_and_say_who_provides_a_missing_field(api, template):
    seed(api, 12)
    api.put("/v1/system-profiles/loan-v1", FULL, format="json")
    api.put(
        "/v1/system-profiles/loan-v2", {**FULL, "name": "Loan approval v2", "provider": ""}, format="json"
    )
    _, content = export_file(api, template=template, format="pdf")
    text = _text(content)
    assert "System description" in text
    for value in (
        "Loan approval assistant",
        "Loan approval v2",
        "Acme Models Ltd",
        FULL["intended_reviewers"],
    ):
        assert value in text, value
    assert re.search(r"Provider not provided", text), "the empty field reads not provided"
    assert "Not provided: provider. The deployer's administrator can provide" in text
    assert "PUT /v1/system-profiles/loan-v2" in text
    if template == "eu_ai_act":
        assert "Annex IV, point 1(a)" in text and "Art. 26(2)" in text
    else:
        assert "Art." not in text and "Annex IV" not in text and "MAP 1.1" in text
    _, data = export_file(api, template=template, format="json")
    section = "executive_summary" if template == "eu_ai_act" else "system_and_purpose"
    described = json.loads(data)["sections"][section]["system_description"]
    assert [p["model_id"] for p in described] == ["loan-v1", "loan-v2"]
    assert described[1]["not_provided"] == ["provider"] and "console" in described[1]["who_can_provide"]


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_a_model_without_a_profile_prints_every_field_as_not_provided(api, template):
    seed(api, 6, model_id="scoring-v9")
    _, content = export_file(api, template=template, format="pdf")
    text = _text(content)
    assert "Model scoring-v9" in text
    for label in (
        "Name",
        "Intended purpose",
        "Deployment context",
        "Provider",
        "Version in the profile",  # beside the versions the period's decisions name
        "Intended reviewers",
    ):
        assert f"{label} not provided" in text, label
    assert (
        "Not provided: name, intended purpose, deployment context, provider, version, intended reviewers."
        in text
    )


def test_the_schema_of_the_list_is_the_paged_envelope_it_answers(api):
    schema = Client().get("/v1/schema", {"format": "json"}).json()
    answer = schema["paths"]["/v1/system-profiles"]["get"]["responses"]["200"]["content"]["application/json"]
    component = schema["components"]["schemas"][answer["schema"]["$ref"].rsplit("/", 1)[-1]]
    body = api.get("/v1/system-profiles").json()
    assert set(component["properties"]) >= {"data", "pagination"} and set(body) >= {"data", "pagination"}
