"""The field rules of request bodies are pydantic's own constraints, and every problem they find
is said in the house words of one table, config.bodyrules.MESSAGES (docs/reference/conventions.md,
Request bodies)."""

from typing import Annotated, Literal

import pytest
from pydantic import Field, StrictInt

from config.bodymodels import BodyModel, body_parse, models_of
from config.bodyrules import Timestamp, text
from config.exceptions import ValidationFailed


class Sample(BodyModel):
    plain: Annotated[str | None, text(5)] = None
    loose: Annotated[str | None, text(5, blank=True)] = None
    trimmed: Annotated[str | None, text(5, trim=True)] = None
    coded: Annotated[str | None, text(8, pattern=r"[a-z]{1,8}", help="1-8 letters a-z")] = None
    share: Annotated[float | None, Field(ge=0, le=1)] = None
    days: Annotated[StrictInt | None, Field(ge=1, le=36_500)] = None
    kind: Literal["a", "b"] | None = None
    items: Annotated[list[Annotated[str, text(5)]] | None, Field(max_length=2)] = None
    when: Timestamp | None = None


def _problems(**body: object) -> list[dict[str, str]]:
    with pytest.raises(ValidationFailed) as caught:
        body_parse(Sample, body)
    assert caught.value.errors is not None
    return caught.value.errors


def _one(**body: object) -> str:
    errors = _problems(**body)
    assert len(errors) == 1, errors
    return errors[0]["message"]


@pytest.mark.parametrize("blank", ["", " ", "\t\n", "\u3000", "\u2028", "\x85"])
def test_a_blank_string_is_refused_unless_the_field_allows_it(blank):
    assert _one(plain=blank) == "must not be blank"
    assert _one(trimmed=blank) == "must not be blank"
    assert body_parse(Sample, {"loose": blank}).loose == blank


def test_a_trimmed_field_keeps_the_string_without_unicode_white_space_at_its_ends():
    assert body_parse(Sample, {"trimmed": "\u3000 abcde\u2028"}).trimmed == "abcde"
    assert body_parse(Sample, {"plain": " ab "}).plain == " ab "  # kept as sent
    assert _one(trimmed=" abcdef ") == "must be at most 5 characters"


@pytest.mark.parametrize("field", ["plain", "loose", "trimmed", "coded"])
@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800"])
def test_nul_and_unpaired_surrogates_are_refused_in_every_string_field(field, bad):
    assert _one(**{field: bad}) == "must not contain NUL or unpaired surrogates"


def test_a_pattern_is_said_in_its_own_words():
    assert _one(coded="AB") == "must be 1-8 letters a-z"
    assert body_parse(Sample, {"coded": "ab"}).coded == "ab"


def test_a_range_is_said_whole_whichever_end_is_crossed():
    assert _one(share=1.5) == "must be between 0 and 1"
    assert _one(share=-0.5) == "must be between 0 and 1"
    assert _one(days=0) == "must be an integer between 1 and 36,500"
    assert _one(share=float("inf")) == "must be a number that fits a finite double"


def test_strict_json_types_are_said_in_house_words():
    assert _one(plain=5) == "must be a string"
    assert _one(share="0.5") == "must be a number"
    assert _one(share=True) == "must be a number"
    assert _one(days=1.0) == "must be an integer"
    assert _one(kind="c") == "must be one of: a, b"
    assert _one(items="a") == "must be an array"
    assert _one(items=["a", "b", "c"]) == "must hold at most 2 items"
    assert _problems(items=["a", None]) == [{"field": "items[1]", "message": "must not be null"}]
    assert _one(when=1_700_000_000) == "must be an ISO 8601 timestamp in years 1..9999"


def test_a_timestamp_is_utc_whatever_its_offset_and_naive_is_utc():
    assert body_parse(Sample, {"when": "2026-11-20T09:00:00+01:00"}).when.isoformat() == (
        "2026-11-20T08:00:00+00:00"
    )
    assert body_parse(Sample, {"when": "2026-11-20T09:00:00"}).when.isoformat() == "2026-11-20T09:00:00+00:00"
    assert _one(when="0001-01-01T00:00:00+01:00") == "must be an ISO 8601 timestamp in years 1..9999"


HOSTILE = [None, 5, 1.5, True, "", " ", "x" * 20_000, "a\x00", [], [None], {}, {"k": None}, float("inf")]


@pytest.mark.parametrize("model", sorted(models_of(), key=lambda m: m.__name__), ids=lambda m: m.__name__)
def test_every_problem_of_every_body_is_said_in_house_words(model):
    """pydantic's own wording ("Input should be ...") never reaches a problem document: each of
    its error types that a body can raise is in the table."""
    for name, info in model.model_fields.items():
        if name in model.nulls_kept or (info.alias or name) in model.nulls_kept:
            continue
        for value in HOSTILE:
            try:
                body_parse(model, {info.alias or name: value})
            except ValidationFailed as exc:
                for error in exc.errors or []:
                    said = error["message"]
                    assert not said.startswith(("Input should", "String should", "Value error")), (
                        name,
                        value,
                        error,
                    )
            except Exception as exc:  # a domain refusal with its own code is a fine answer
                assert getattr(exc, "status", 500) < 500, (name, value, exc)


class Open(BodyModel):
    rate: Annotated[float, Field(gt=0, lt=1)] | None = None
    runs: Annotated[StrictInt, Field(ge=1000, le=20_000)] | None = None


def test_a_range_inside_an_optional_field_and_open_bounds_are_said_in_house_words():
    with pytest.raises(ValidationFailed) as caught:
        body_parse(Open, {"rate": 1, "runs": 5})
    assert caught.value.errors == [
        {"field": "rate", "message": "must be greater than 0 and less than 1"},
        {"field": "runs", "message": "must be an integer between 1,000 and 20,000"},
    ]
