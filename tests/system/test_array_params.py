"""The parameters the hot statements send their rows in: config.db.bulk.array_param's array
literal reads back on the server as exactly the values psycopg's own array dumper would have
sent (doubles to the last bit, strings with quotes, backslashes, braces, commas, spaces and
non-ASCII, NULL beside the string "NULL", dates before year 1000, aware times), and anything
else is left to psycopg."""

import datetime as dt
import random

import pytest
from django.db import connection

from config.db.bulk import array_param

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


@pytest.fixture
def read_back():
    def read(sql_type: str, values: list) -> list:
        with connection.cursor() as cursor:
            literal = array_param(values)
            assert isinstance(literal, str)
            cursor.execute(f"SELECT %s::{sql_type}[]", [literal])
            (ours,) = cursor.fetchone()
            cursor.execute(f"SELECT %s::{sql_type}[]", [values])
            (psycopgs,) = cursor.fetchone()
        assert ours == psycopgs
        return ours

    return read


def test_doubles_read_back_to_the_last_bit(read_back):
    rng = random.Random(5)
    values = [rng.random() * 10 ** rng.randint(-300, 300) * rng.choice([1, -1]) for _ in range(500)]
    values += [0.1, 1 / 3, -0.0, 5e-324, 1.7976931348623157e308, None]
    back = read_back("double precision", values)
    assert back == values
    assert str(back[-4]) == "-0.0"


def test_infinities_read_back_in_an_array_literal():
    values = [float("inf"), float("-inf"), 1.5]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::double precision[]", [array_param(values)])
        assert cursor.fetchone()[0] == values


def test_strings_read_back_as_sent(read_back):
    values = ['a"b', "back\\slash", "{,}", " spaced ", "NULL", "", "Straße ünd 😀", "line\nbreak", None, "'"]
    assert read_back("text", values) == values


def test_integers_booleans_dates_and_times(read_back):
    assert read_back("bigint", [0, -1, 2**62, None]) == [0, -1, 2**62, None]
    assert read_back("boolean", [True, False, None]) == [True, False, None]
    dates = [dt.date(999, 1, 2), dt.date(2026, 11, 26), dt.date(9999, 12, 31)]
    assert read_back("date", dates) == dates
    times = [dt.datetime(2026, 11, 26, 9, 0, 0, 123000, tzinfo=dt.UTC), None]
    assert read_back("timestamptz", times) == times


def test_other_values_are_left_to_psycopg():
    assert array_param([b"bytes"]) == [b"bytes"]
    assert array_param([dt.datetime(2026, 1, 1)]) == [dt.datetime(2026, 1, 1)]  # naive: no literal
