"""The per-process cache of verified keys (keys/keycache.py; docs/reference/access.md,
Authentication): used only with Redis and the rate limits on, and only while the keys' stamp
is the one read before the key's lookup. The same behaviour across real processes:
tests/system/test_keycache_processes.py."""

import datetime as dt

import pytest
import time_machine

from config.ratelimit import stamp_renew
from config.redis import get_redis
from keys import keycache
from keys.models import ApiKey
from keys.services import KEYS_STAMP, api_key_rotate
from tests.conftest import assert_problem, client_for, make_key

pytestmark = pytest.mark.django_db(transaction=True)
STATUS = "/v1/engines/status"


@pytest.fixture
def key_reads(monkeypatch) -> list[str]:
    """The digests of the keys read from the database."""
    reads: list[str] = []
    real = keycache.api_key_row

    def counting(*, digest: str):
        reads.append(digest)
        return real(digest=digest)

    monkeypatch.setattr(keycache, "api_key_row", counting)
    return reads


@pytest.fixture
def limits_on(settings):
    settings.RATE_LIMITS_ENABLED = True


@pytest.mark.redis
def test_with_redis_a_verified_key_is_read_once_per_process(limits_on, key_reads):
    api = client_for(make_key().value)
    for _ in range(3):
        assert api.get(STATUS).status_code == 200
    assert len(key_reads) == 1


def test_with_the_rate_limits_off_every_request_reads_its_key(settings, key_reads):
    settings.RATE_LIMITS_ENABLED = False
    api = client_for(make_key().value)
    for _ in range(3):
        assert api.get(STATUS).status_code == 200
    assert len(key_reads) == 3


def test_without_redis_every_request_reads_its_key(limits_on, key_reads, monkeypatch):
    monkeypatch.setattr("config.ratelimit.get_redis", lambda: None)
    monkeypatch.setattr(keycache, "get_redis", lambda: None)
    api = client_for(make_key().value)
    for _ in range(3):
        assert api.get(STATUS).status_code == 200
    assert len(key_reads) == 3


@pytest.mark.redis
def test_a_missing_stamp_is_no_cache(limits_on, key_reads):
    issued = make_key()
    api = client_for(issued.value)
    assert api.get(STATUS).status_code == 200
    # Changed behind the services' back (no renewal), then Redis loses the stamp (flushed).
    ApiKey.objects.filter(pk=issued.key.pk).update(status=ApiKey.Status.REVOKED)
    get_redis().delete(f"trustcal:stamp:{KEYS_STAMP}")
    assert_problem(api.get(STATUS), 401, "INVALID_API_KEY")
    assert len(key_reads) == 2


@pytest.mark.redis
def test_the_request_that_finds_a_changed_key_is_limited_by_its_new_tier(limits_on):
    issued = make_key(tier="pilot")
    api = client_for(issued.value)
    assert api.get(STATUS)["X-RateLimit-Limit"] == "100"
    ApiKey.objects.filter(pk=issued.key.pk).update(tier="enterprise")
    stamp_renew(KEYS_STAMP)  # as every writer of keys does (keys.services)
    assert api.get(STATUS)["X-RateLimit-Limit"] == "1000"


@pytest.mark.redis
def test_a_cached_key_stops_when_its_rotation_grace_ends(limits_on, settings):
    issued = make_key()
    api_key_rotate(key=issued.key)
    api = client_for(issued.value)
    assert api.get(STATUS).status_code == 200  # in its grace, cached
    hours = settings.KEY_ROTATION_GRACE_HOURS + 1
    with time_machine.travel(dt.datetime.now(dt.UTC) + dt.timedelta(hours=hours)):
        assert_problem(api.get(STATUS), 401, "INVALID_API_KEY")


def test_the_cache_holds_digests_and_rows_only(limits_on):
    issued = make_key()
    client_for(issued.value).get(STATUS)
    held = repr(keycache.verified_keys._rows)
    assert issued.value not in held and issued.value[9:] not in held
