"""Shared fixtures: API clients with real keys, service markers, clean limiters per test."""

import os

import pytest
from django.conf import settings
from django.db import connection
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from config import metrics
from config.ratelimit import reset_all_limiters
from config.redis import get_redis, redis_reset
from config.scopes import ALL_SCOPES
from keys.services import IssuedKey, api_key_create, key_usage_discard
from tests.xdist_groups import apply_xdist_groups

REQUIRE_SERVICES = os.environ.get("TRUSTCAL_REQUIRE_SERVICES") == "1"

# No per-example time limit in property tests: what they assert is the value, never how fast it
# came (timing is bench/'s), and Hypothesis's default 200 ms is a timing test on a loaded machine.
hypothesis_settings.register_profile("trustcal", deadline=None)
hypothesis_settings.load_profile("trustcal")


# Modules of pure computation (statistics against scipy/statsmodels, simulations, canonical text,
# static checks of the source): no database, cache or broker, so their result cannot depend on
# the backend. CI's PostgreSQL + Redis leg sets TRUSTCAL_SKIP_BACKEND_FREE=1 and leaves out
# their tests that use no database fixture (they ran in the SQLite leg of the same run).
BACKEND_FREE = frozenset(
    f"tests/{name}.py"
    for name in (
        "audit/test_json_text", "audit/test_note", "audit/test_standard_jcs",
        "audit/test_stored_canonical_texts", "bias/test_detection_simulation", "bias/test_significance",
        "calibration/test_measures_stats", "calibration/test_reviewer_simulation",
        "calibration/test_risk_user_figures", "calibration/test_validity", "compliance/test_drift_section",
        "compliance/test_recommendations", "drift/test_calibration_mc", "drift/test_chart_math",
        "drift/test_drift_simulation", "drift/test_engine", "drift/test_follow_fit",
        "drift/test_offline_drift", "fairness/test_amplification_math", "system/test_architecture",
        "system/test_architecture_walk", "system/test_body_rules", "system/test_boundaries",
        "system/test_typing", "system/test_xdist_groups", "system/test_no_conflict_markers", "system/test_reference_citations",
        "system/test_settings_documented",
    )
)  # fmt: skip
_DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback", "live_server"}  # fmt: skip


def _backend_free(item: pytest.Item) -> bool:
    if item.get_closest_marker("layout") is not None:
        return True
    return (
        item.nodeid.split("::", 1)[0] in BACKEND_FREE
        and item.get_closest_marker("django_db") is None
        and not _DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    apply_xdist_groups(items)  # after xdist wrote the groups: trylast
    if os.environ.get("TRUSTCAL_SKIP_BACKEND_FREE") != "1":
        return
    left_out = [item for item in items if _backend_free(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not _backend_free(item)]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """`postgres`/`redis` tests skip where the service is not configured, except under
    TRUSTCAL_REQUIRE_SERVICES=1 (CI's second leg), where a missing service is a failure."""
    needs = []
    if item.get_closest_marker("postgres") and connection.vendor != "postgresql":
        needs.append("PostgreSQL (DATABASE_URL=postgres://...)")
    if item.get_closest_marker("redis") and not settings.REDIS_URL:
        needs.append("Redis (REDIS_URL)")
    if needs:
        message = "needs " + " and ".join(needs)
        if REQUIRE_SERVICES:
            pytest.fail(message + " but TRUSTCAL_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(message)


@pytest.fixture(autouse=True)
def _clean_limiters_and_metrics():
    """Rate-limit buckets, sliding windows and request metrics start empty in every test."""
    client = get_redis()
    if client is not None:
        for key in client.scan_iter("trustcal:*"):
            client.delete(key)
    reset_all_limiters()
    redis_reset()
    metrics.reset()
    key_usage_discard()
    yield


def make_key(
    customer_id: str = "acme",
    tier: str = "enterprise",
    is_admin: bool = False,
    description: str = "",
    scopes: tuple[str, ...] = ALL_SCOPES,
) -> IssuedKey:
    return api_key_create(
        customer_id=customer_id, tier=tier, is_admin=is_admin, description=description, scopes=scopes
    )


def assert_problem(response, status: int, code: str) -> dict:
    """The answer is the problem document of `status` and `code` (docs/reference/errors.md)."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code and body["status"] == status
    assert body["request_id"] == response["X-Request-ID"]
    return body


def client_for(value: str | None) -> APIClient:
    client = APIClient()
    if value:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {value}")
    return client


@pytest.fixture
def acme_key(db) -> IssuedKey:
    return make_key("acme", "enterprise")


@pytest.fixture
def api(acme_key) -> APIClient:
    """A client authenticated as customer `acme` (enterprise tier)."""
    return client_for(acme_key.value)


@pytest.fixture
def other_api(db) -> APIClient:
    """A client of another customer, for tenant-isolation checks."""
    return client_for(make_key("globex", "enterprise").value)


@pytest.fixture
def admin_key(db) -> IssuedKey:
    return make_key("admin", "enterprise", is_admin=True)


@pytest.fixture
def admin_api(admin_key) -> APIClient:
    return client_for(admin_key.value)


@pytest.fixture
def anon_api() -> APIClient:
    return APIClient()


@pytest.fixture(params=["folded", "set-wise"])
def applier(request, settings) -> str:
    """Both ways the decision pipeline writes calibration aggregates and subgroup statistics
    (docs/architecture.md, "The set-wise batch path"): folded in Python for every write, or
    derived set-wise in SQL for every write (PostgreSQL's; skipped on SQLite)."""
    if request.param == "set-wise":
        if connection.vendor != "postgresql":
            pytest.skip("the set-wise applier is PostgreSQL's")
        settings.INGEST_SETWISE_FROM = 1
    else:
        settings.INGEST_SETWISE_FROM = 10**9
    return request.param
