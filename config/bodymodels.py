"""Request bodies as pydantic v2 models (docs/reference/conventions.md, Request bodies).

A body is a `BodyModel` subclass in its app's `inputs.py`: one annotated attribute per field,
its rules in the annotation (`Text`, `Choice`, `Judged`, pydantic's own types for the rest).
`body_parse(Model, data)` gives the validated, frozen model, which the view passes to the
service as it is; or raises VALIDATION_ERROR listing every problem with its path, in the
same words and order as every other body (docs/reference/errors.md, The problem document).
The OpenAPI component of the body is the model's own JSON schema (drf-spectacular's pydantic
extension, `config.schema.BodyModelExtension`).

Rules every body shares: JSON types are strict (no "0.5" for a number, no 1 for true); a
field sent as null is a field left out (its default, or "is required"), except in a PATCH
body (`partial = True`: only the fields sent change, null included) and in a field the
service judges itself (`Judged`); keys a body does not declare are ignored unless the model
says `extra="forbid"`.
"""

import re
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from config.api import require_object
from config.bodies import failure

# A rule's own message travels as a custom error of this type (its text is the message).
_RULE = "rule"


def problem(message: str) -> PydanticCustomError:
    """The error a field rule raises: `message` is what the problem document says."""
    return PydanticCustomError(_RULE, "{message}", {"message": message})


class BodyModel(BaseModel):
    """The base of every request body model (see the module's rules)."""

    # No schema title: the component's name is the model's name in the schema (as for every
    # other body), so a generated client's class is named as the component (WebhookCreateInputRequest).
    model_config = ConfigDict(
        extra="ignore", frozen=True, strict=True, hide_input_in_errors=True,
        json_schema_extra=lambda schema: schema.pop("title", None),
    )  # fmt: skip
    partial: ClassVar[bool] = False  # a PATCH: only the fields sent change, a null one included

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: object) -> object:
        if cls.partial or not isinstance(data, dict):
            return data
        judged = _judged_fields(cls)
        return {key: value for key, value in data.items() if value is not None or key in judged}

    def sent(self) -> dict[str, object]:
        """A PATCH body's fields as sent (by name), the ones left out absent."""
        return {
            name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set
        }


def body_parse[M: BodyModel](model: type[M], data: Any) -> M:  # Any: whatever the JSON parser gave
    """The validated body, or VALIDATION_ERROR with every problem (paths `a.b`, `a[0]`)."""
    try:
        return model.model_validate(require_object(data))
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        # keys the body refuses first, then the fields in their declared order (pydantic's own)
        ordered = sorted(errors, key=lambda e: e["type"] != "extra_forbidden")
        raise failure([{"field": _path(e["loc"]), "message": _message(model, e)} for e in ordered]) from None


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "body"


_MESSAGES = {
    "missing": "is required",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "finite_number": "must be a number that fits a finite double",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "list_type": "must be an array",
}


def _message(model: type[BaseModel], error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == _RULE:
        return error["msg"]
    if kind == "extra_forbidden":
        owner = _model_at(model, error["loc"][:-1])
        return f"unknown field (known: {', '.join(owner.model_fields)})"
    return _MESSAGES.get(kind, error["msg"])


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel]:
    """The model of the object at `loc` (a nested body), for its field names."""
    for part in loc:
        if isinstance(part, str):
            annotation = model.model_fields[part].annotation
            nested = [a for a in (annotation, *getattr(annotation, "__args__", ())) if _is_model(a)]
            if nested:
                model = nested[0]
    return model


def _is_model(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _judged_fields(model: type[BaseModel]) -> frozenset[str]:
    cached: frozenset[str] | None = model.__dict__.get("_judged_cache")
    if cached is None:
        cached = frozenset(
            name
            for name, info in model.model_fields.items()
            if any(isinstance(m, Judged) for m in info.metadata)
        )
        type.__setattr__(model, "_judged_cache", cached)
    return cached


# --- field rules ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A string: at most `max_length` characters (after trimming when `trim`), not blank unless
    `allow_blank`, matching `pattern` (said as `pattern_help`) when given."""

    max_length: int
    allow_blank: bool = False
    trim: bool = False
    pattern: str = ""
    pattern_help: str = ""

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        regex = re.compile(self.pattern) if self.pattern else None

        def check(value: str | None) -> str | None:
            if value is None:  # an optional field of a PATCH body
                return None
            if self.trim:
                value = value.strip()
            if not self.allow_blank and not value.strip():
                raise problem("must not be blank")
            if len(value) > self.max_length:
                raise problem(f"must be at most {self.max_length} characters")
            if regex is not None and not regex.fullmatch(value):
                raise problem(f"must be {self.pattern_help or 'of the form ' + self.pattern}")
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        target = handler.resolve_ref_schema(out)
        target["maxLength"] = self.max_length
        if self.pattern:
            target["pattern"] = self.pattern
        return out


@dataclass(frozen=True)
class Choice:
    """One of `choices` (a string)."""

    choices: tuple[str, ...]

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        def check(value: object) -> object:
            if value is not None and (not isinstance(value, str) or value not in self.choices):
                raise problem(f"must be one of: {', '.join(self.choices)}")
            return value

        return core_schema.no_info_before_validator_function(check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        handler.resolve_ref_schema(out)["enum"] = list(self.choices)
        return out


@dataclass(frozen=True)
class Judged:
    """Any JSON value, null included, passed to the service, whose own rule judges it (with an
    error code of its own); `schema` is what /v1/schema shows for it."""

    schema: dict[str, Any]

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return dict(self.schema)


def models_of(base: type[BodyModel] = BodyModel) -> set[type[BodyModel]]:
    """Every body model defined so far (for the test that the schema's bodies come from them)."""
    found: set[type[BodyModel]] = set()
    todo = list(base.__subclasses__())
    while todo:
        model = todo.pop()
        found.add(model)
        todo.extend(model.__subclasses__())
    return found


__all__ = ["BodyModel", "Choice", "Judged", "Text", "body_parse", "models_of", "problem"]
