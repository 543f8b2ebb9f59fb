"""config.prepared.combined: inside the block the small writes of config.bulk are held and go as
one statement (on the wire: one Execute), each taking effect as it would alone; a write to a
table already held, or any other statement, sends the held ones first; a held write's error is
Django's, raised when the block is left."""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import IntegrityError, connection

from config import prepared
from config.bulk import additive_upsert, bulk_insert
from keys.models import ApiKeyUsageDay, Customer
from tests.conftest import make_key
from tests.statements import counted

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

DAY = dt.date(2026, 11, 26)


def _usage(key_id: int, day: dt.date = DAY) -> int:
    return ApiKeyUsageDay.objects.get(key_id=key_id, day=day).count


def _add(key_id: int, count: int, day: dt.date = DAY) -> None:
    additive_upsert(ApiKeyUsageDay, key=("key_id", "day"), values=("count",), rows=[(key_id, day, count)])


@contextmanager
def _held() -> Iterator[None]:
    """The hot path's setting: pipeline mode, the writes held."""
    connection.ensure_connection()
    with connection.wrap_database_errors, connection.connection.pipeline(), prepared.combined():
        yield


def test_held_writes_go_as_one_statement_and_each_takes_effect():
    key = make_key().key
    new = Customer(id="combined-new", created_at=dt.datetime(2026, 11, 26, tzinfo=dt.UTC))
    usage = [ApiKeyUsageDay(key_id=key.pk, day=DAY + dt.timedelta(days=n), count=n) for n in (1, 2)]
    with counted() as count, _held():
        bulk_insert(Customer, [new])
        keys = bulk_insert(ApiKeyUsageDay, usage, with_ids=True, deferred=True)  # its keys come back
    keys()
    assert count.statements == 1, count.listing()
    assert all(u.pk for u in usage) and usage[0].pk < usage[1].pk
    stored = {u.pk: u.count for u in ApiKeyUsageDay.objects.filter(pk__in=[u.pk for u in usage])}
    assert stored == {usage[0].pk: 1, usage[1].pk: 2}
    assert Customer.objects.filter(pk="combined-new").exists()


def test_a_held_upsert_adds_to_the_stored_row():
    key_id = make_key().key.pk
    _add(key_id, 2)
    new = Customer(id="combined-other", created_at=dt.datetime(2026, 11, 26, tzinfo=dt.UTC))
    with counted() as count, _held():
        bulk_insert(Customer, [new])
        _add(key_id, 3)
    assert count.statements == 1, count.listing()
    assert _usage(key_id) == 5
    assert Customer.objects.filter(pk="combined-other").exists()


def test_a_second_write_to_the_same_table_goes_apart_and_both_count():
    key_id = make_key().key.pk
    with counted() as count, _held():
        _add(key_id, 1)
        _add(key_id, 10)
    assert count.statements == 2, count.listing()
    assert _usage(key_id) == 11


def test_another_statement_sends_the_held_writes_before_it():
    key_id = make_key().key.pk
    with _held():
        _add(key_id, 4)
        seen = _usage(key_id)  # an ORM read, in the same pipeline
    assert seen == 4


def test_a_held_write_that_breaks_a_constraint_raises_django_s_integrity_error():
    key_id = make_key().key.pk
    _add(key_id, 1)
    duplicate = ApiKeyUsageDay(key_id=key_id, day=DAY, count=1)
    with pytest.raises(IntegrityError), _held():
        _add(key_id, 1, DAY + dt.timedelta(days=1))
        bulk_insert(ApiKeyUsageDay, [duplicate])
