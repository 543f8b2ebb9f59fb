"""List filters as django-filter FilterSets on top of the one input layer (config.inputs).

Every list endpoint declares its query parameters as a FilterSet (`filtersets = {"list": ...}`
on a viewset, per action; `filterset_class` on a single-GET view). Each filter's form field
applies a config.inputs rule (free text without NUL or unpaired surrogates, enumerations,
`from`/`to` bounds in years 1..9999 with a date `to` covering its day), and the FilterSet's
form checks each declared `from`/`to` pair's order, so a bad value answers the same
VALIDATION_ERROR problem document as every other input (docs/reference/errors.md). The
filterset only narrows the tenant-filtered rows of `get_queryset()` (config.api.TenantViewSet
applies the tenant filter again after every backend). drf-spectacular documents each
parameter from the filter: name, type, enum and the filter's `help_text`.

Parameter names that are not Python names (`from`) are declared with a trailing underscore
(`from_`), dropped from the parameter's name.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django import forms
from django.db.models import QuerySet
from django_filters import rest_framework as django_filters
from drf_spectacular.contrib.django_filters import DjangoFilterExtension, _NoHint
from drf_spectacular.plumbing import get_view_model
from rest_framework.request import Request
from rest_framework.views import APIView

from config import inputs
from config.exceptions import ValidationFailed

if TYPE_CHECKING:  # drf_spectacular.openapi imports DRF's generics, which import this module's backend
    from drf_spectacular.openapi import AutoSchema


def _message(exc: ValidationFailed) -> str:
    errors = exc.errors or [{"message": exc.detail}]
    return str(errors[0]["message"])


class RuleField(forms.Field):
    """A query parameter cleaned by one config.inputs rule: `rule(raw)` gives the value or
    raises ValidationFailed, whose message becomes the field's error. `choices` are kept
    for the schema (the rule enforces them)."""

    widget = forms.TextInput

    def __init__(
        self,
        *,
        rule: Callable[[object], object],
        choices: list[tuple[str, str]] | None = None,
        **kwargs: Any,  # Any: forms.Field's own keyword arguments, passed on
    ) -> None:
        self.rule = rule
        self.choices = choices
        kwargs["required"] = False
        super().__init__(**kwargs)

    def to_python(self, value: object) -> object:
        try:
            return self.rule(value)
        except ValidationFailed as exc:
            raise forms.ValidationError(_message(exc)) from exc

    def validate(self, value: object) -> None:
        """The rule has decided; an absent value (None) does not narrow."""


class RuleFilter(django_filters.CharFilter):
    """A filter whose value a config.inputs rule cleans; documented as a string (with `choices`,
    an enumeration). An absent value (None) does not narrow; False does."""

    field_class = RuleField

    def __init__(self, *args: object, **kwargs: object) -> None:
        # The label is the help text: django-filter would derive it from a model field, and a
        # filterset read for its values (filter_values) has no model.
        kwargs.setdefault("label", kwargs.get("help_text"))
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet, value: object) -> QuerySet:
        # (With `method`, django-filter calls the method instead, for any value but None/"".)
        if value is None:
            return qs
        return self.get_method(qs)(**{f"{self.field_name}__{self.lookup_expr}": value})


def text_filter(
    field_name: str | None = None, *, help_text: str, max_length: int = 256, **kwargs: object
) -> RuleFilter:
    """Free text, at most `max_length` characters, without NUL or unpaired surrogates; exact match."""
    return RuleFilter(
        field_name=field_name,
        rule=lambda raw: inputs.text(raw, "value", max_length=max_length),
        help_text=help_text,
        **kwargs,
    )


def choice_filter(
    field_name: str | None = None,
    *,
    choices: list[str] | dict[str, str],
    help_text: str,
    **kwargs: object,
) -> RuleFilter:
    """One of `choices` (a dict gives each value its description for the schema)."""
    values = list(choices)
    labels = choices if isinstance(choices, dict) else {c: c for c in values}
    return RuleFilter(
        field_name=field_name,
        rule=lambda raw: inputs.choice(raw, "value", values),
        choices=[(c, labels[c]) for c in values],
        help_text=help_text,
        **kwargs,
    )


_BOOLEANS = {"true": True, "false": False}


def boolean_filter(field_name: str | None = None, *, help_text: str, **kwargs: object) -> RuleFilter:
    """`true` or `false` (exactly those words), cleaned to a bool."""
    return RuleFilter(
        field_name=field_name,
        rule=lambda raw: _BOOLEANS.get(inputs.choice(raw, "value", list(_BOOLEANS)) or ""),
        choices=[("true", "true"), ("false", "false")],
        help_text=help_text,
        **kwargs,
    )


def bound_filter(field_name: str | None = None, *, end: bool, help_text: str, **kwargs: object) -> RuleFilter:
    """A `from` (end=False, inclusive) or `to` (end=True) bound: a date covers its UTC day (a `to`
    date ends where the next day begins, exclusive), a timestamp is exact; years 1..9999."""
    return RuleFilter(
        field_name=field_name,
        rule=lambda raw: None if raw in (None, "") else inputs.bound(raw, "value", end=end),
        lookup_expr="lt" if end else "gte",
        help_text=help_text,
        **kwargs,
    )


class QueryForm(forms.Form):
    """The form of a QueryFilterSet: each (from, to) pair of `ranges` in order."""

    ranges: tuple[tuple[str, str], ...] = ()

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        for low, high in self.ranges:
            if low in self.errors or high in self.errors:
                continue
            try:
                inputs.check_order(
                    cleaned.get(low), cleaned.get(high), self.data.get(high), from_name=low, to_name=high
                )
            except ValidationFailed as exc:
                self.add_error(low, _message(exc))
        return cleaned


class _NoRows:
    """The queryset stand-in of a FilterSet read for its values only (filter_values)."""

    model = None


class QueryFilterSet(django_filters.FilterSet):
    """The base of every list's FilterSet: `ranges` names its (from, to) parameter pairs."""

    ranges: tuple[tuple[str, str], ...] = ()

    class Meta:
        form = QueryForm

    @classmethod
    def get_filters(cls) -> dict[str, django_filters.Filter]:
        return {name.removesuffix("_"): f for name, f in super().get_filters().items()}

    def get_form_class(self) -> type[forms.Form]:
        form_class = super().get_form_class()
        form_class.ranges = self.ranges  # type: ignore[attr-defined]
        return form_class


def validation_failed(errors: dict[str, list[str]]) -> ValidationFailed:
    """A FilterSet form's errors as the VALIDATION_ERROR every input gives (docs/reference/errors.md,
    The problem document): one error reads as config.inputs.invalid's; several are all listed, in
    the order of the parameters, the first five in `detail`."""
    items = [
        {"field": name, "message": str(message)} for name, messages in errors.items() for message in messages
    ]
    detail = "; ".join(f"{item['field']}: {item['message']}" for item in items[:5])
    return ValidationFailed(f"{detail}.", errors=items)


class FilterBackend(django_filters.DjangoFilterBackend):
    """DjangoFilterBackend with the filterset chosen per action (`filtersets` on a viewset, so
    that retrieve and the other actions read no list parameter) or `filterset_class` on a
    single-GET view, and invalid values answered as VALIDATION_ERROR problem documents."""

    def get_filterset_class(
        self, view: APIView, queryset: QuerySet | None = None
    ) -> type[QueryFilterSet] | None:
        per_action = getattr(view, "filtersets", None)
        if per_action is not None:
            filterset_class = per_action.get(getattr(view, "action", None))
        else:
            filterset_class = getattr(view, "filterset_class", None)
        model = filterset_class._meta.model if filterset_class is not None else None
        if model is not None and queryset is not None and not issubclass(queryset.model, model):
            return None  # the parent object's rows (get_object of an action that lists other rows)
        return filterset_class

    def filter_queryset(self, request: Request, queryset: QuerySet, view: APIView) -> QuerySet:
        filterset = self.get_filterset(request, queryset, view)
        if filterset is None:
            return queryset
        if not filterset.is_valid():
            raise validation_failed(filterset.errors)
        return filterset.qs


def filtered(request: Request, queryset: QuerySet, view: APIView) -> QuerySet:
    """`queryset` narrowed by the view's filterset, for an action whose rows are not the view's
    own model (a webhook's deliveries): the rows come already scoped through the parent object."""
    return FilterBackend().filter_queryset(request, queryset, view)


def filter_values(request: Request, view: APIView) -> dict[str, object]:
    """The cleaned values of the view's filterset, for reads computed in SQL from values rather
    than a queryset (the oversight figures). Parameters not given are None; each value is of its
    filter's type, which the view names (a TypedDict of its own)."""
    filterset_class = FilterBackend().get_filterset_class(view)
    assert filterset_class is not None, f"{type(view).__name__} declares no filterset"
    filterset = filterset_class(data=request.query_params, queryset=_NoRows(), request=request)
    if not filterset.is_valid():
        raise validation_failed(filterset.errors)
    return dict(filterset.form.cleaned_data)


class FilterSetSchema(DjangoFilterExtension):
    """Documents the filterset of config's backend: per action, and for single-GET views that
    have no model (drf-spectacular's own extension needs the view's model)."""

    target_class = "config.filters.FilterBackend"
    match_subclasses = True
    priority = 1

    def get_schema_operation_parameters(
        self, auto_schema: "AutoSchema", *args: object, **kwargs: object
    ) -> list[dict[str, object]]:
        filterset_class = self.target.get_filterset_class(auto_schema.view)
        if filterset_class is None:
            return []
        model = get_view_model(auto_schema.view, emit_warnings=False)
        return [
            parameter
            for name, filter_field in filterset_class.base_filters.items()
            for parameter in self.resolve_filter_field(
                auto_schema, model, filterset_class, name, filter_field
            )
        ]

    def _get_filter_method_hint(self, filter_method: object) -> object:
        """The type comes from the filter, not from a filter method's annotation (_NoHint: none)."""
        return _NoHint

    def _get_field_description(
        self, filter_field: django_filters.Filter, description: str | None
    ) -> str | None:
        """The filter's help text; the list of choices only where a choice has a description
        of its own (the enumeration already lists the values)."""
        choices = filter_field.extra.get("choices") or []
        if all(value == label for value, label in choices):
            return filter_field.extra.get("help_text") or description
        return super()._get_field_description(filter_field, description)
