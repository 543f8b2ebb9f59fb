"""config.bulk.array_param: the array literal the hot statements send reads back on the server
as exactly the values psycopg's own array dumper would have sent (doubles to the last bit,
strings with quotes, backslashes, braces, commas, spaces and non-ASCII, NULL beside the string
"NULL", dates before year 1000, aware times), and anything else is left to psycopg."""

import datetime as dt
import random

import pytest
from django.db import connection

from config.bulk import array_param

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _read_back(sql_type: str, values: list) -> list:
    literal = array_param(values)
    assert isinstance(literal, str)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT %s::{sql_type}[], %s::{sql_type}[]", [literal, values])
        ours, psycopgs = cursor.fetchone()
    assert ours == psycopgs
    return ours


def test_doubles_read_back_to_the_last_bit():
    rng = random.Random(5)
    values = [rng.random() * 10 ** rng.randint(-300, 300) * rng.choice([1, -1]) for _ in range(500)]
    values += [0.1, 1 / 3, -0.0, 5e-324, 1.7976931348623157e308, None, float("inf"), float("-inf")]
    assert _read_back("double precision", values) == values


def test_strings_read_back_as_sent():
    values = ['a"b', "back\\slash", "{,}", " spaced ", "NULL", "", "Straße ünd 😀", "line\nbreak", None, "'"]
    assert _read_back("text", values) == values


def test_integers_booleans_dates_and_times():
    assert _read_back("bigint", [0, -1, 2**62, None]) == [0, -1, 2**62, None]
    assert _read_back("boolean", [True, False, None]) == [True, False, None]
    dates = [dt.date(999, 1, 2), dt.date(2026, 11, 26), dt.date(9999, 12, 31)]
    assert _read_back("date", dates) == dates
    times = [dt.datetime(2026, 11, 26, 9, 0, 0, 123000, tzinfo=dt.UTC), None]
    assert _read_back("timestamptz", times) == times


def test_other_values_are_left_to_psycopg():
    assert array_param([b"bytes"]) == [b"bytes"]
    assert array_param([dt.datetime(2026, 1, 1)]) == [dt.datetime(2026, 1, 1)]  # naive: no literal
