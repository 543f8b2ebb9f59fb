"""Staff see their organisations (docs/reference/access.md, "Staff and their organisations"): a
staff user who is not a superuser sees and acts on the organisations assigned to them
(config.models.StaffOrganisation) and nothing of any other, on every console list, page, filter
choice, action, form and download.

One place does it for every model page: the console's site (config.admin_site) registers each
ModelAdmin as a subclass with OrganisationScope in front, so the scope wraps whatever the
ModelAdmin itself does. A ModelAdmin names the path from its model to the organisation in
`organisation_field` ("customer", "signal__customer"); one that names none is for superusers
only (API keys, staff accounts, the console's log). Pages that are not a model's list take their
organisations from `organisation_ids` and `scoped` here."""

from __future__ import annotations  # django-stubs' generics, which Django's classes are not at run time

from typing import TYPE_CHECKING, cast

from django.contrib import admin
from django.contrib.admin.filters import RelatedFieldListFilter
from django.db.models import ForeignKey, ManyToManyField, Model, QuerySet
from django.db.models.fields.related import RelatedField
from django.forms import BaseForm, ModelChoiceField, ModelMultipleChoiceField
from django.http import Http404, HttpRequest

from config.models import StaffOrganisation

if TYPE_CHECKING:  # django-stubs' name for what a list filter entry may be
    from django.contrib.admin.options import _ListFilterT
    from django.utils.functional import _StrOrPromise

ORGANISATION_MODEL = StaffOrganisation._meta.get_field("customer").related_model


def organisation_ids(request: HttpRequest) -> frozenset[str] | None:
    """The ids of the organisations the request's user may see; None: every one (a superuser).
    Read once per request."""
    user = request.user
    if getattr(user, "is_superuser", False):
        return None
    cached: frozenset[str] | None = getattr(request, "_organisation_ids", None)
    if cached is None:
        if not getattr(user, "is_authenticated", False) or not getattr(user, "is_staff", False):
            cached = frozenset()
        else:
            rows = StaffOrganisation.objects.filter(user_id=cast(int, user.pk)).values_list(
                "customer_id", flat=True
            )
            cached = frozenset(rows)
        request._organisation_ids = cached  # type: ignore[attr-defined]
    return cached


def organisation_allowed(request: HttpRequest, customer_id: object) -> bool:
    ids = organisation_ids(request)
    return ids is None or customer_id in ids


def scoped[M: Model](request: HttpRequest, queryset: QuerySet[M], field: str | None) -> QuerySet[M]:
    """The rows of `queryset` whose organisation (reached by `field`; None: the model has none)
    the user may see."""
    ids = organisation_ids(request)
    if ids is None:
        return queryset
    if field is None:
        return queryset.none()
    return queryset.filter(**{f"{field}__in": ids})


def organisation_path(model: type[Model]) -> str | None:
    """How a model reaches its organisation, for a choice of it in a form or a filter: the
    organisation itself ("pk") or its `customer` field; None when it has neither."""
    if model is ORGANISATION_MODEL:
        return "pk"
    for field in model._meta.get_fields():
        if field.name == "customer" and field.is_relation and field.related_model is ORGANISATION_MODEL:
            return "customer"
    return None


def scoped_choices[M: Model](request: HttpRequest, queryset: QuerySet[M]) -> QuerySet[M]:
    """A form's or filter's choices of a related model, narrowed to the user's organisations."""
    return scoped(request, queryset, organisation_path(queryset.model))


def scope_form[F: BaseForm](request: HttpRequest, form: F) -> F:
    """Narrow every model choice of a form (the organisation of a report or an erasure request)
    to the user's organisations; a posted id of another organisation is then an invalid choice."""
    for field in form.fields.values():
        if isinstance(field, ModelChoiceField) and field.queryset is not None:
            field.queryset = scoped_choices(request, field.queryset)
    return form


class OrganisationRelatedFilter(RelatedFieldListFilter):
    """A list filter on a related model whose choices are the user's organisations' only."""

    def field_choices(
        self, field: RelatedField[object, object], request: HttpRequest, model_admin: admin.ModelAdmin[Model]
    ) -> list[tuple[str, _StrOrPromise]]:
        related = field.remote_field.model
        allowed = scoped_choices(request, related._default_manager.all()).values("pk")
        choices = field.get_choices(include_blank=False, limit_choices_to={"pk__in": allowed})
        return cast("list[tuple[str, _StrOrPromise]]", choices)  # a list without the blank choice


class OrganisationScope(admin.ModelAdmin):  # type: ignore[type-arg]  # any model's admin
    """Put in front of every registered ModelAdmin by the console's site (organisation_scoped
    copies the ModelAdmin's `organisation_field` onto the class it makes)."""

    organisation_field: str | None

    def _platform_only(self, request: HttpRequest) -> bool:
        return self.organisation_field is None and not getattr(request.user, "is_superuser", False)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Model]:
        return scoped(request, super().get_queryset(request), self.organisation_field)

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Model | None:
        found = super().get_object(request, object_id, from_field)
        if found is None and organisation_ids(request) is not None:
            raise Http404("No such row among your organisations'.")
        return found

    def has_module_permission(self, request: HttpRequest) -> bool:
        return not self._platform_only(request) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self._platform_only(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: object) -> bool:
        return not self._platform_only(request) and super().has_add_permission(request, *args)

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self._platform_only(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return not self._platform_only(request) and super().has_delete_permission(request, obj)

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[object, object], request: HttpRequest, **kwargs: object
    ) -> ModelChoiceField[Model] | None:
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        queryset = getattr(field, "queryset", None)
        if field is not None and queryset is not None:
            field.queryset = scoped_choices(request, queryset)
        return field

    def formfield_for_manytomany(
        self, db_field: ManyToManyField[Model, Model], request: HttpRequest, **kwargs: object
    ) -> ModelMultipleChoiceField[Model] | None:
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        queryset = getattr(field, "queryset", None)
        if field is not None and queryset is not None:
            field.queryset = scoped_choices(request, queryset)
        return field

    def get_list_filter(self, request: HttpRequest) -> list[_ListFilterT]:
        return [self._scoped_filter(entry) for entry in super().get_list_filter(request)]

    def _scoped_filter(self, entry: _ListFilterT) -> _ListFilterT:
        """A filter on a related model (named, or with Django's related filter) lists only the
        user's organisations' rows; other filters read the scoped queryset already."""
        name = entry[0] if isinstance(entry, tuple | list) else entry
        if not isinstance(name, str):
            return entry  # a SimpleListFilter: its lookups read the scoped queryset
        if isinstance(entry, tuple | list) and not (
            isinstance(entry[1], type) and issubclass(entry[1], RelatedFieldListFilter)
        ):
            return entry
        try:
            field = self.model._meta.get_field(name.split("__")[0])
        except Exception:
            return entry
        if "__" in name or not field.is_relation:
            return entry
        return (name, OrganisationRelatedFilter)


def organisation_scoped[M: Model](
    model: type[M], admin_class: type[admin.ModelAdmin[M]]
) -> type[admin.ModelAdmin[M]]:
    """The admin class as the console's site registers it for `model`: OrganisationScope in
    front, with the ModelAdmin's `organisation_field`, else the model's own `customer` (or the
    organisation itself), else none (superusers only)."""
    if issubclass(admin_class, OrganisationScope):
        return admin_class
    field = getattr(admin_class, "organisation_field", None) or organisation_path(model)
    namespace = {"__module__": admin_class.__module__, "organisation_field": field}
    return cast(
        "type[admin.ModelAdmin[M]]", type(admin_class.__name__, (OrganisationScope, admin_class), namespace)
    )
