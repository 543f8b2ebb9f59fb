"""Request bodies as pydantic v2 models (docs/reference/conventions.md, Request bodies).

A body is a `BodyModel` subclass in its app's `inputs.py`: one annotated attribute per field,
its rules in the annotation as pydantic's own constraints (config.bodyrules: `text(256)`,
`Field(ge=0, le=1)`, `Literal[...]`, `Timestamp`, ...), a model validator for a rule over several
fields. Every message comes from one table (config.bodyrules.MESSAGES).
`body_parse(Model, data)` gives the validated, frozen model, which the view passes to the
service as it is; or raises VALIDATION_ERROR listing every problem with its path, in the
same words and order as every other body (docs/reference/errors.md, The problem document).
The OpenAPI component of the body is the model's own JSON schema (drf-spectacular's own pydantic
extension, drf_spectacular.contrib.pydantic, loaded with drf-spectacular: a view names the model
in `@extend_schema(request=Model)`).

Rules every body shares: JSON types are strict (no "0.5" for a number, no 1 for true); a
field sent as null is a field left out (its default, or "is required": body_parse drops the
nulls of the body's own fields; a nested object's optional fields default to None), except in a PATCH
body (`partial = True`: only the fields sent change, null included) and in a field the
service judges itself or whose null means something (`nulls_kept`); keys a body does not declare are ignored unless the model
says `extra="forbid"`.
"""

from typing import Annotated, ClassVar, get_args, get_origin

import annotated_types
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from config.api import require_object
from config.bodyrules import RULE, message, range_text
from config.exceptions import DomainError, ValidationFailed
from config.jsondoc import JSONValue


def failure(errors: list[dict[str, str]]) -> ValidationFailed:
    """VALIDATION_ERROR listing every problem; the detail shows the first five."""
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    return ValidationFailed(detail, errors=errors)


class BodyModel(BaseModel):
    """The base of every request body model (see the module's rules)."""

    # No schema title: the component's name is the model's name in the schema (as for every
    # other body), so a generated client's class is named as the component (WebhookCreateInputRequest).
    model_config = ConfigDict(
        extra="ignore", frozen=True, strict=True, allow_inf_nan=False, hide_input_in_errors=True,
        json_schema_extra=lambda schema: schema.pop("title", None),
    )  # fmt: skip
    partial: ClassVar[bool] = False  # a PATCH: only the fields sent change, a null one included
    # Fields (by wire name) whose problems answer their own error code instead of VALIDATION_ERROR,
    # checked in this order before the rest of the body, each alone (docs/reference/errors.md).
    refusals: ClassVar[dict[str, type[DomainError]]] = {}
    # Fields (by wire name) whose null is a value, kept: one the service judges itself (a
    # webhook's url), or a null that means something (no maximum).
    nulls_kept: ClassVar[frozenset[str]] = frozenset()

    def sent(self) -> dict[str, object]:
        """A PATCH body's fields as sent (by name), the ones left out absent."""
        return {
            name: getattr(self, name) for name in type(self).model_fields if name in self.model_fields_set
        }


def body_parse[M: BodyModel](model: type[M], data: JSONValue) -> M:  # whatever the JSON parser gave
    """The validated body, or VALIDATION_ERROR with every problem (paths `a.b`, `a[0]`)."""
    body = require_object(data)
    if not model.partial and None in body.values():  # a null is a field left out
        body = {key: value for key, value in body.items() if value is not None or key in model.nulls_kept}
    try:  # the model's own validator: model_validate's keyword handling costs a batch about 1 ms
        validated: M = model.__pydantic_validator__.validate_python(body)
        return validated
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
    refuses first, then its fields in their declared order (pydantic's own). A problem found
    twice (a field read through another's alias) is listed once, where it was found last."""
    listed: list[dict[str, str]] = []
    for error in _extras_first(exc.errors(include_url=False, include_context=True)):
        ctx = error.get("ctx") or {}
        if error["type"] == RULE and "at" in ctx:
            for at, said in ctx["at"]:
                listed.append({"field": _path(error["loc"], at), "message": said})
        else:
            listed.append({"field": _path(error["loc"]), "message": _message(model, error)})
    last = {(e["field"], e["message"]): i for i, e in enumerate(listed)}
    return [e for i, e in enumerate(listed) if last[(e["field"], e["message"])] == i]


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
        if part == "[key]":  # a key of a map: the path names the key itself
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    if at:
        out += at if not out or at.startswith("[") else f".{at}"
    return out or "body"


def _message(model: type[BaseModel], error: ErrorDetails) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        owner = _model_at(model, error["loc"][:-1])
        return f"unknown field (known: {', '.join(owner.model_fields)})"
    if kind in _RANGE_ERRORS:  # the field's whole range
        field = _field_at(model, error["loc"])
        low, high = _bounds(field) if field else (None, None)
        if low is None and high is None:  # not found: the bound the error names
            value = (error.get("ctx") or {})[_RANGE_ERRORS[kind]]
            low, high = (
                ((value, kind.endswith("equal")), None)
                if "greater" in kind
                else (None, (value, kind.endswith("equal")))
            )
        words = range_text(low, high)
        integer = field is not None and _is_integer(field.annotation)
        return f"must be an integer {words}" if integer else f"must be {words}"
    if error["loc"][-1] == "[key]":
        return f"keys {message(error).removeprefix('must ')}"
    return message(error)


_RANGE_ERRORS = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}
Bound = tuple[object, bool] | None  # (value, inclusive)


def _bounds(field: FieldInfo) -> tuple[Bound, Bound]:
    """The field's lower and upper bounds, on the field or inside its annotation (`X | None`)."""
    found = list(field.metadata)
    todo: list[object] = [field.annotation]
    while todo:
        annotation = todo.pop()
        if get_origin(annotation) is Annotated:
            for meta in getattr(annotation, "__metadata__", ()):
                found.extend(meta.metadata if isinstance(meta, FieldInfo) else [meta])
        todo.extend(get_args(annotation))
    low: Bound = None
    high: Bound = None
    for meta in found:
        if isinstance(meta, annotated_types.Ge | annotated_types.Gt):
            low = (meta.ge, True) if isinstance(meta, annotated_types.Ge) else (meta.gt, False)
        elif isinstance(meta, annotated_types.Le | annotated_types.Lt):
            high = (meta.le, True) if isinstance(meta, annotated_types.Le) else (meta.lt, False)
    return low, high


def _is_integer(annotation: object) -> bool:
    """An int, StrictInt, or either or None."""
    if get_origin(annotation) is Annotated:
        return _is_integer(get_args(annotation)[0])
    return annotation is int or any(_is_integer(a) for a in get_args(annotation))


def _field_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> FieldInfo | None:
    """The declared field at `loc` (names on the wire), or None."""
    owner = _model_at(model, loc[:-1])
    name = loc[-1]
    return next((info for field, info in owner.model_fields.items() if name in (field, info.alias)), None)


def _model_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> type[BaseModel]:
    """The model of the object at `loc` (a nested body), for its field names."""
    for part in loc:
        field = (
            next((i for n, i in model.model_fields.items() if part in (n, i.alias)), None)
            if isinstance(part, str)
            else None
        )
        if field is not None:
            annotation = field.annotation
            nested = [a for a in (annotation, *getattr(annotation, "__args__", ())) if _is_model(a)]
            if nested:
                model = nested[0]
    return model


def _is_model(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


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
