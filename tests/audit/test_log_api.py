"""POST /log over HTTP: the stored decision, validation, idempotent replay and conflict,
late outcomes (docs/reference/decisions.md), and the trust.miscalibrated event (docs/reference/calibration.md, docs/reference/events.md)."""

import pytest

from tests.audit.factories import decision_body
from webhooks.models import Event

pytestmark = pytest.mark.django_db

DECISION_KEYS = {
    "decision_id",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "initial_decision",
    "outcome",
    "context",
    "subgroups",
    "metadata",
    "timestamp",
    "logged_at",
    "followed_ai",
    "calibration_category",
    "subject_id",
    "review_started_at",
    "review_seconds",
    "probe",
    "entry_id",
    "sequence",
    "hash",
    "previous_hash",
}


def post(api, body):
    return api.post("/v1/log", body, format="json")


def assert_validation_error(response, field):
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "VALIDATION_ERROR"
    # a nested field is named by its path (`metadata.k`, `subgroups.custom`)
    assert any(e["field"] == field or e["field"].startswith(f"{field}.") for e in body["errors"]), body


def test_log_returns_201_with_the_stored_decision_and_its_chain_fields(api):
    r = post(
        api,
        decision_body(
            decision_id="loan-1",
            subgroups={"gender": "female", "custom": {"region": "north"}},
            metadata={"channel": "web"},
            initial_decision="deny",
            timestamp="2026-11-20T09:30:00Z",
        ),
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert set(body) == DECISION_KEYS
    assert body["decision_id"] == "loan-1"
    assert body["entry_id"].startswith("aud_")
    assert body["sequence"] == 1
    assert body["previous_hash"] == "0" * 64
    assert len(body["hash"]) == 64 and body["hash"] == body["hash"].lower()
    assert body["timestamp"] == "2026-11-20T09:30:00.000Z"
    assert body["logged_at"].endswith("Z")
    assert body["subgroups"] == {"gender": "female", "custom": {"region": "north"}}
    assert body["metadata"] == {"channel": "web"}
    assert body["followed_ai"] is True
    assert body["calibration_category"] == "CALIBRATED"


def test_log_without_decision_id_generates_a_dec_id(api):
    body = decision_body(decision_id=...)
    r = post(api, body)
    assert r.status_code == 201
    assert r.json()["decision_id"].startswith("dec_")


def test_log_only_requires_user_id_ai_recommendation_and_user_decision(api):
    r = post(api, {"user_id": "u", "ai_recommendation": "yes", "user_decision": "no"})
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["ai_confidence"] is None and body["model_id"] is None and body["outcome"] is None
    assert body["subgroups"] == {} and body["metadata"] == {} and body["context"] == ""


def test_followed_ai_compares_after_trimming_and_case_folding(api):
    assert (
        post(api, decision_body(ai_recommendation="Approve", user_decision="  approve ")).json()[
            "followed_ai"
        ]
        is True
    )
    assert (
        post(api, decision_body(ai_recommendation="approve", user_decision="deny")).json()["followed_ai"]
        is False
    )


def test_confidence_is_accepted_as_an_alias_of_ai_confidence(api):
    body = decision_body(ai_confidence=..., confidence=0.42)
    r = post(api, body)
    assert r.status_code == 201
    assert r.json()["ai_confidence"] == 0.42


def test_confidence_and_ai_confidence_that_differ_are_rejected(api):
    assert_validation_error(post(api, decision_body(ai_confidence=0.4, confidence=0.5)), "confidence")


def test_confidence_above_one_is_rejected(api):
    assert_validation_error(post(api, decision_body(ai_confidence=1.5)), "ai_confidence")
    assert_validation_error(post(api, decision_body(ai_confidence=..., confidence=1.5)), "confidence")


@pytest.mark.parametrize("value", [-0.1, "0.5", True])
def test_confidence_must_be_a_number_between_0_and_1(api, value):
    assert_validation_error(post(api, decision_body(ai_confidence=value)), "ai_confidence")


@pytest.mark.parametrize("field", ["user_id", "ai_recommendation", "user_decision"])
def test_missing_required_field_is_rejected(api, field):
    assert_validation_error(post(api, decision_body(**{field: ...})), field)


def test_a_number_where_a_string_is_expected_is_rejected(api):
    assert_validation_error(post(api, decision_body(user_id=42)), "user_id")


def test_context_of_20000_characters_is_rejected(api):
    assert_validation_error(post(api, decision_body(context="x" * 20_000)), "context")


def test_context_of_10000_characters_is_accepted(api):
    r = post(api, decision_body(context="é" * 10_000))
    assert r.status_code == 201
    assert len(r.json()["context"]) == 10_000


def test_metadata_over_16_kib_is_rejected(api):
    assert_validation_error(post(api, decision_body(metadata={"blob": "x" * 16_400})), "metadata")


def test_metadata_must_be_an_object(api):
    assert_validation_error(post(api, decision_body(metadata=["a"])), "metadata")


@pytest.mark.parametrize("value", ["has space", "a/b", "", "x" * 129])
def test_decision_id_outside_the_allowed_alphabet_or_length_is_rejected(api, value):
    assert_validation_error(post(api, decision_body(decision_id=value)), "decision_id")


def test_decision_id_with_every_allowed_character_is_kept_as_given(api):
    r = post(api, decision_body(decision_id="A-z_0.9:x"))
    assert r.status_code == 201
    assert r.json()["decision_id"] == "A-z_0.9:x"


@pytest.mark.parametrize(
    "subgroups",
    [
        "female",
        {"gender": 1},
        {"height": "tall"},
        {"custom": ["a"]},
        {"custom": {"region": 3}},
    ],
)
def test_subgroups_must_have_the_detect_bias_shape(api, subgroups):
    assert_validation_error(post(api, decision_body(subgroups=subgroups)), "subgroups")


def test_naive_timestamp_is_taken_as_utc(api):
    r = post(api, decision_body(timestamp="2026-11-20T10:15:30"))
    assert r.status_code == 201
    assert r.json()["timestamp"] == "2026-11-20T10:15:30.000Z"


def test_timestamp_with_offset_is_stored_in_utc(api):
    r = post(api, decision_body(timestamp="2026-11-20T12:15:30.250+02:00"))
    assert r.json()["timestamp"] == "2026-11-20T10:15:30.250Z"


def test_unparseable_timestamp_is_rejected(api):
    assert_validation_error(post(api, decision_body(timestamp="yesterday")), "timestamp")


def test_body_that_is_not_an_object_is_rejected(api):
    r = post(api, ["a"])
    assert r.status_code == 400
    assert r.json()["code"] == "VALIDATION_ERROR"


def test_invalid_json_is_rejected(api):
    r = api.post("/v1/log", data="{nope", content_type="application/json")
    assert r.status_code == 400
    assert r.json()["code"] == "INVALID_JSON"


def test_trailing_slash_reaches_the_same_handler(api):
    assert api.post("/v1/log/", decision_body(), format="json").status_code == 201


def test_bad_input_stores_nothing(api):
    post(api, decision_body(ai_confidence=1.5))
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == 0


# --- idempotency -------------------------------------------------------------------------------


def test_same_decision_id_and_payload_replays_with_200_and_the_stored_decision(api):
    body = decision_body(decision_id="same-1")
    first = post(api, body)
    again = post(api, body)
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == first.json()
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == 1


def test_replay_through_the_confidence_alias_is_the_same_payload(api):
    first = post(api, decision_body(decision_id="same-2", ai_confidence=0.6))
    replay = post(api, decision_body(decision_id="same-2", ai_confidence=..., confidence=0.6))
    assert first.status_code == 201 and replay.status_code == 200
    assert replay.json() == first.json() and replay.json()["ai_confidence"] == 0.6
    assert api.get("/v1/audit-trail").json()["pagination"]["total"] == 1


def test_replay_without_timestamp_keeps_the_original_default_timestamp(api):
    body = decision_body(decision_id="same-3")
    first = post(api, body).json()
    assert post(api, body).json()["timestamp"] == first["timestamp"]


def test_same_decision_id_with_a_different_payload_is_a_409_decision_conflict(api):
    post(api, decision_body(decision_id="dup-1", user_decision="approve"))
    r = post(api, decision_body(decision_id="dup-1", user_decision="deny"))
    assert r.status_code == 409
    assert r.json()["code"] == "DECISION_CONFLICT"
    assert (
        api.get("/v1/audit-trail", {"decision_id": "dup-1"}).json()["data"][0]["user_decision"] == "approve"
    )


def test_two_customers_may_use_the_same_decision_id(api, other_api):
    assert post(api, decision_body(decision_id="shared")).status_code == 201
    assert post(other_api, decision_body(decision_id="shared", user_decision="deny")).status_code == 201


# --- late outcomes ------------------------------------------------------------------------------


def test_late_outcome_appends_an_outcome_entry_and_updates_the_decision(api):
    post(
        api,
        decision_body(
            decision_id="late-1", ai_recommendation="approve", user_decision="approve", ai_confidence=...
        ),
    )
    r = post(api, {"decision_id": "late-1", "outcome": "deny"})
    assert r.status_code == 201, r.content
    entry = r.json()
    assert entry["type"] == "outcome"
    assert entry["sequence"] == 2
    assert entry["outcome"] == "deny"
    # No confidence, so the outcome decides: followed, and the AI was wrong (with a confidence,
    # the confidence would decide: docs/reference/calibration.md).
    assert entry["calibration_category"] == "OVERTRUSTING"
    trail = api.get("/v1/audit-trail", {"decision_id": "late-1"}).json()["data"]
    assert [e["type"] for e in trail] == ["outcome", "decision"]
    assert trail[1]["outcome"] is None  # the first entry is never rewritten
    assert api.get("/v1/audit-trail/verify").json()["valid"] is True


def test_late_outcome_for_an_unknown_decision_is_404(api):
    r = post(api, {"decision_id": "nope", "outcome": "deny"})
    assert r.status_code == 404
    assert r.json()["code"] == "NOT_FOUND"


def test_late_outcome_for_another_customers_decision_is_404(api, other_api):
    post(other_api, decision_body(decision_id="theirs"))
    assert post(api, {"decision_id": "theirs", "outcome": "deny"}).status_code == 404


def test_the_same_late_outcome_again_answers_the_recorded_entry(api):
    post(api, decision_body(decision_id="late-2"))
    first = post(api, {"decision_id": "late-2", "outcome": "approve"})
    again = post(api, {"decision_id": "late-2", "outcome": "approve"})
    assert first.status_code == 201 and again.status_code == 200
    assert again.json()["entry_id"] == first.json()["entry_id"]


def test_a_replay_of_the_original_log_after_a_late_outcome_is_still_a_replay(api):
    body = decision_body(decision_id="late-3")
    post(api, body)
    post(api, {"decision_id": "late-3", "outcome": "deny"})
    r = post(api, body)
    assert r.status_code == 200
    assert r.json()["outcome"] == "deny"


def test_outcome_with_other_fields_is_a_full_log_and_needs_the_required_fields(api):
    assert_validation_error(post(api, {"decision_id": "x", "outcome": "deny", "context": "c"}), "user_id")


# --- events -------------------------------------------------------------------------------------


def test_miscalibrated_record_fires_trust_miscalibrated_with_ids_and_regulation(api):
    post(api, decision_body(decision_id="ev-1", ai_confidence=0.2, user_decision="approve"))
    post(api, decision_body(decision_id="ev-2", ai_confidence=0.6, user_decision="approve"))
    events = list(Event.objects.filter(type="trust.miscalibrated"))
    assert len(events) == 1
    data = events[0].data
    assert data["decision_id"] == "ev-1"
    assert data["user_id"] == "alice"
    assert data["calibration_category"] == "OVERTRUSTING"
    assert data["entry_id"].startswith("aud_")
    assert data["regulation"] == "EU AI Act Art. 14(4)(b)"
    assert events[0].customer_id == "acme"


def test_late_outcome_that_makes_a_record_miscalibrated_fires_trust_miscalibrated(api):
    # No confidence: the decision is unscored (it fires nothing) until its outcome is known.
    post(api, decision_body(decision_id="ev-3", ai_confidence=..., user_decision="deny"))
    assert not Event.objects.filter(type="trust.miscalibrated").exists()
    post(api, {"decision_id": "ev-3", "outcome": "approve"})  # overrode, and the AI was right
    event = Event.objects.get(type="trust.miscalibrated")
    assert event.data["calibration_category"] == "UNDERTRUSTING"
    assert event.data["source"] == "outcome"


def test_metrics_count_decisions_logged(api, other_api, admin_api):
    for _ in range(3):
        post(api, decision_body())
    post(other_api, decision_body())
    post(api, {"decision_id": "d-outcome", "outcome": "x"})  # unknown: nothing logged
    assert admin_api.get("/v1/metrics").json()["decisions_logged"] == 4  # the platform's
    assert api.get("/v1/metrics").json()["decisions_logged"] == 3  # the caller's own


def test_calibration_engine_is_listed_in_engines_status(api, admin_api):
    post(api, decision_body())
    engines = {e["name"]: e for e in admin_api.get("/v1/engines/status").json()["engines"]}
    assert engines["calibration"]["status"] == "operational"
    assert engines["calibration"]["last_activity_at"].endswith("Z")


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"user_id": "a\x00b"}, "user_id"),
        ({"context": "nul \x00 here"}, "context"),
        ({"metadata": {"k": "v\x00"}}, "metadata.k"),
        ({"subgroups": {"gender": "f\x00"}}, "subgroups.gender"),
        ({"subgroups": {"custom": {"k\x00": "v"}}}, "subgroups.custom"),
    ],
)
def test_nul_characters_are_a_validation_error_not_a_server_error(api, overrides, field):
    assert_validation_error(post(api, decision_body(**overrides)), field)


@pytest.mark.parametrize("path", ["/v1/audit-trail?user_id=a%00b", "/v1/trust-score/trend?model_id=%00"])
def test_nul_characters_in_query_filters_are_a_validation_error(api, path):
    r = api.get(path)
    assert r.status_code == 400
    assert r.json()["code"] == "VALIDATION_ERROR"


def test_several_field_problems_are_listed_together(api):
    r = post(api, {"user_id": 5, "ai_recommendation": "", "confidence": 2})
    assert r.status_code == 400
    fields = {e["field"] for e in r.json()["errors"]}
    assert {"user_id", "ai_recommendation", "user_decision", "confidence"} <= fields
