"""The write path's array parameters by column type (config.db.bulk.column_arrays): each literal reads back on
PostgreSQL as exactly the values psycopg's own array dumper sends (doubles to the last bit,
infinities and NaN, ints and big ints, strings with quotes, backslashes, braces, commas and the
text "NULL" beside NULL, aware times)."""

import datetime as dt
import math
import random

import pytest
from django.db import connection

from config.db.bulk import _bools, _numbers, _texts, _times

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _read_back(sql_type: str, literal: str, values: list) -> list:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT %s::{sql_type}[]", [literal])
        (ours,) = cursor.fetchone()
        cursor.execute(f"SELECT %s::{sql_type}[]", [values])
        (psycopgs,) = cursor.fetchone()
    return [ours, psycopgs]


def test_doubles_read_back_to_the_last_bit():
    rnd = random.Random(7)
    values = [rnd.uniform(-1e6, 1e6) for _ in range(200)] + [
        rnd.random() * 10.0 ** rnd.randint(-300, 300) for _ in range(200)
    ]
    values += [0.0, -0.0, 5e-324, 1.7976931348623157e308, math.inf, -math.inf, None]
    ours, psycopgs = _read_back("double precision", _numbers(values), values)
    assert [None if v is None else v.hex() for v in ours] == [
        None if v is None else float(v).hex() for v in values
    ]
    assert [None if v is None else v.hex() for v in ours] == [
        None if v is None else v.hex() for v in psycopgs
    ]


def test_nan_reads_back_as_nan():
    ours, _ = _read_back("double precision", _numbers([math.nan]), [math.nan])
    assert math.isnan(ours[0])


def test_integers_and_booleans_read_back():
    values = [0, -1, 2**31 - 1, -(2**63), 2**63 - 1, None]
    assert _read_back("bigint", _numbers(values), values)[0] == values
    flags = [True, False, None]
    assert _read_back("boolean", _bools(flags), flags)[0] == flags


def test_texts_with_quotes_backslashes_and_null_read_back():
    values = ['a "b"', "c\\d", "{e,f}", "NULL", None, "", " sp ace ", "ü ∑ 😀", '\\"', "x,y}"]
    ours, psycopgs = _read_back("text", _texts(values), values)
    assert ours == values == psycopgs


def test_aware_times_read_back():
    values = [
        dt.datetime(2026, 11, 29, 18, 44, 35, 118123, tzinfo=dt.UTC),
        dt.datetime(999, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        None,
    ]
    ours, psycopgs = _read_back("timestamp with time zone", _times(values), values)
    assert ours == values == psycopgs
