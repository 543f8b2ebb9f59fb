"""A Text field answers exactly as its rule (config.bodyrules.Text.judge) does: pydantic's own
check keeps a string as sent only where the rule would keep it unchanged, and any other string
gets the rule's verdict and message (docs/reference/conventions.md, Request bodies)."""

from typing import Annotated

import pytest
from pydantic_core import PydanticCustomError

from config.bodymodels import BodyModel, body_parse
from config.bodyrules import Text
from config.exceptions import ValidationFailed

RULES = [
    Text(5),
    Text(5, trim=True),
    Text(5, allow_blank=True),
    Text(5, allow_blank=True, trim=True),
    Text(8, pattern=r"[a-z._-]{1,8}", pattern_help="a-z, '.', '_' and '-'"),
    Text(8, pattern=r"(?!\.\.?$)[a-z.]{1,8}", pattern_help="not . nor .."),
]
# Python's whitespace beyond ASCII (\x1c-\x1f are whitespace to str.strip, not to Unicode),
# blank strings longer than the limit, line ends inside and at the edges.
SAMPLES = [
    "",
    " ",
    "\x1c",
    "\x1fa",
    "a\x1c",
    "\x85",
    "\u3000a",
    "a\u2028",
    "abc",
    " abc ",
    "abcdef",
    " " * 6,
    "a\nb",
    "ab\n",
    "\tab",
    "ABC",
    "é",
    "a" * 5,
    " " + "a" * 5,
    "a.b-c",
    "a b",
    ".",
    "..",
    "...",
    "ab\n",
]


def _judged(rule: Text, value: str) -> tuple[str, str]:
    try:
        return "kept", rule.judge(value)
    except PydanticCustomError as exc:
        return "refused", str(exc)


def _parsed(model: type[BodyModel], value: str) -> tuple[str, str]:
    try:
        return "kept", body_parse(model, {"value": value}).value  # type: ignore[attr-defined]
    except ValidationFailed as exc:
        assert exc.errors is not None and len(exc.errors) == 1 and exc.errors[0]["field"] == "value"
        return "refused", exc.errors[0]["message"]


@pytest.mark.parametrize("rule", RULES, ids=repr)
def test_a_text_field_answers_as_its_rule_for_every_kind_of_whitespace(rule):
    model = type("Sample", (BodyModel,), {"__annotations__": {"value": Annotated[str, rule]}})
    for value in SAMPLES:
        assert _parsed(model, value) == _judged(rule, value), repr(value)


def test_a_text_field_refuses_what_is_not_a_string_with_one_problem():
    model = type("Sample", (BodyModel,), {"__annotations__": {"value": Annotated[str, Text(5)]}})
    with pytest.raises(ValidationFailed) as caught:
        body_parse(model, {"value": 5})
    assert caught.value.errors == [{"field": "value", "message": "must be a string"}]
