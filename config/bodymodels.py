"""Request bodies as pydantic v2 models (docs/reference/conventions.md, Request bodies).

A body is a `BodyModel` subclass in its app's `inputs.py`: one annotated attribute per field,
its rules in the annotation (config.bodyrules: `Text`, `Number`, `Timestamp`, ...; pydantic's
own types for the rest; a model validator for a rule over several fields).
`body_parse(Model, data)` gives the validated, frozen model, which the view passes to the
service as it is; or raises VALIDATION_ERROR listing every problem with its path, in the
same words and order as every other body (docs/reference/errors.md, The problem document).
The OpenAPI component of the body is the model's own JSON schema (drf-spectacular's own pydantic
extension, drf_spectacular.contrib.pydantic, loaded with drf-spectacular: a view names the model
in `@extend_schema(request=Model)`).

Rules every body shares: JSON types are strict (no "0.5" for a number, no 1 for true); a
field sent as null is a field left out (its default, or "is required"), except in a PATCH
body (`partial = True`: only the fields sent change, null included) and in a field the
service judges itself (`Judged`); keys a body does not declare are ignored unless the model
says `extra="forbid"`.
"""

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import ErrorDetails

from config.api import require_object
from config.bodyrules import JUDGED, KEPT, RULE, Judged
from config.exceptions import DomainError, ValidationFailed


def failure(errors: list[dict[str, str]]) -> ValidationFailed:
    """VALIDATION_ERROR listing every problem; the detail shows the first five."""
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    return ValidationFailed(detail, errors=errors)


class BodyModel(BaseModel):
    """The base of every request body model (see the module's rules)."""

    # No schema title: the component's name is the model's name in the schema (as for every
    # other body), so a generated client's class is named as the component (WebhookCreateInputRequest).
    model_config = ConfigDict(
        extra="ignore", frozen=True, strict=True, hide_input_in_errors=True,
        json_schema_extra=lambda schema: schema.pop("title", None),
    )  # fmt: skip
    partial: ClassVar[bool] = False  # a PATCH: only the fields sent change, a null one included
    # Fields (by wire name) whose problems answer their own error code instead of VALIDATION_ERROR,
    # checked in this order before the rest of the body, each alone (docs/reference/errors.md).
    refusals: ClassVar[dict[str, type[DomainError]]] = {}

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: object) -> object:
        if cls.partial or not isinstance(data, dict) or None not in data.values():
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
    body = require_object(data)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        errors = body_errors(model, exc)
    for name, refusal in model.refusals.items():  # a field with its own code answers alone
        own = [e for e in errors if e["field"] == name or e["field"].startswith((f"{name}.", f"{name}["))]
        if own:
            raw = body.get(name)
            shown = "missing" if raw is None else repr(raw) if isinstance(raw, str) else "not a string"
            raise refusal(f"{name} {shown}: {own[0]['message']}", errors=own)
    raise failure(errors)


def body_errors(model: type[BaseModel], exc: ValidationError) -> list[dict[str, str]]:
    """The problem document's `errors` of a failed validation: in each object, the keys it
    refuses first, then its fields in their declared order (pydantic's own)."""
    listed: list[dict[str, str]] = []
    found: list[ErrorDetails] = []
    for error in exc.errors(include_url=False, include_input=False):
        if KEPT in error["loc"]:  # a Text value not kept as sent: the judge's problem says why
            continue
        if JUDGED in error["loc"]:
            error["loc"] = tuple(part for part in error["loc"] if part != JUDGED)
        found.append(error)
    for error in _extras_first(found):
        ctx = error.get("ctx") or {}
        if error["type"] == RULE and "at" in ctx:
            for at, message in ctx["at"]:
                listed.append({"field": _path(error["loc"], at), "message": message})
        else:
            listed.append({"field": _path(error["loc"]), "message": _message(model, error)})
    return listed


def _extras_first(errors: list[ErrorDetails]) -> list[ErrorDetails]:
    """Each refused key moved before the first problem of the object that holds it."""
    out: list[ErrorDetails] = []
    for error in errors:
        if error["type"] != "extra_forbidden":
            out.append(error)
            continue
        owner = error["loc"][:-1]
        place = next(
            (
                i
                for i, e in enumerate(out)
                if e["loc"][: len(owner)] == owner
                and len(e["loc"]) > len(owner)
                and e["type"] != "extra_forbidden"
            ),
            len(out),
        )
        out.insert(place, error)
    return out


def _path(loc: tuple[int | str, ...], at: str = "") -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    if at:
        out += at if not out or at.startswith("[") else f".{at}"
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
    if kind == RULE:
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


def models_of(base: type[BodyModel] = BodyModel) -> set[type[BodyModel]]:
    """Every body model defined so far (for the test that the schema's bodies come from them)."""
    found: set[type[BodyModel]] = set()
    todo = list(base.__subclasses__())
    while todo:
        model = todo.pop()
        found.add(model)
        todo.extend(model.__subclasses__())
    return found


__all__ = ["BodyModel", "body_errors", "body_parse", "failure", "models_of"]
