"""Admin building blocks shared by the apps."""

import datetime as dt
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models.constants import LOOKUP_SEP
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from config.figures import p_value_text


class FieldsNeedPermission:
    """A ModelAdmin mixin: `guarded_fields` are shown (detail page) and filterable (changelist
    query) only to staff holding `guarded_permission`. Named rather than imported, like the
    console's group permissions."""

    guarded_fields: tuple[str, ...] = ()
    guarded_permission = ""

    def _guarded_for(self, request) -> tuple[str, ...]:
        return () if request.user.has_perm(self.guarded_permission) else self.guarded_fields

    def get_fields(self, request, obj=None):
        hidden = self._guarded_for(request)
        return [f for f in super().get_fields(request, obj) if f not in hidden]  # type: ignore[misc]

    def lookup_allowed(self, lookup, value, request):
        # Filtering on a hidden field would tell its value (?review_seconds__lt=3).
        if lookup.split(LOOKUP_SEP)[0] in self._guarded_for(request):
            return False
        return super().lookup_allowed(lookup, value, request)  # type: ignore[misc]


def request_page(
    model_admin: admin.ModelAdmin, request, *, title: str, form, template: str
) -> TemplateResponse:
    """A console page whose form requests something through a service (a report, an erasure)."""
    context = {
        **model_admin.admin_site.each_context(request),
        "title": title,
        "form": form,
        "opts": model_admin.model._meta,
        "has_view_permission": model_admin.has_view_permission(request),
    }
    return TemplateResponse(request, template, context)


class ReadOnlyAdmin(admin.ModelAdmin):
    show_full_result_count = False  # no COUNT(*) over millions of rows per page view

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    # A row's organisation is shown as its id, not as a link to Access -> Customers, whose pages are
    # for superusers only (the link answered 403 to compliance staff).
    def _organisation_as_text(self, request) -> bool:
        has_customer = any(f.name == "customer" for f in self.model._meta.get_fields())
        return has_customer and not request.user.has_perm("keys.view_customer")

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if not self._organisation_as_text(request):
            return fields
        return ["organisation" if f == "customer" else f for f in fields if f != "organisation"]

    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        if self._organisation_as_text(request) and "organisation" not in fields:
            return (*fields, "organisation")
        return fields

    @admin.display(description="organisation")
    def organisation(self, obj) -> str:
        return str(obj.customer_id)


# Colours of severity and status badges (styles in templates/admin/base_site.html).
BADGE_KINDS = {
    "critical": "critical",
    "high": "high",
    "medium": "medium",
    "low": "low",
    "none": "none",
    "open": "open",
    "acknowledged": "acknowledged",
    "resolved": "done",
    "false_positive": "done",
    "completed": "done",
    "scheduled": "acknowledged",
    "refused": "medium",
}


def badge(value: str | None, label: str | None = None) -> str:
    """A coloured label for a severity or status, readable without colour too (the text is the value)."""
    if not value:
        return "-"
    text = label or value.replace("_", " ")
    return format_html('<span class="tc-badge tc-{}">{}</span>', BADGE_KINDS.get(value, "none"), text)


class InputFilter(admin.SimpleListFilter):
    """A list filter typed into a box (for fields with too many values to list, e.g. user ids):
    exact match on `parameter_name`, which is also the field."""

    template = "admin/console/input_filter.html"

    def lookups(self, request, model_admin):
        return [("", "")]  # the filter is shown only when it has lookups

    def queryset(self, request, queryset):
        value = self.value()
        return queryset.filter(**{str(self.parameter_name): value}) if value else queryset

    def choices(self, changelist):
        # The other filters' parameters, kept as hidden fields of the box's form.
        yield {
            "value": self.value() or "",
            "other": [
                (k, v) for k, values in changelist.get_filters_params().items() if k != self.parameter_name
                for v in (values if isinstance(values, list) else [values])
            ],
        }  # fmt: skip


def input_filter(field: str, title: str) -> type[InputFilter]:
    return type(f"{field.title()}InputFilter", (InputFilter,), {"parameter_name": field, "title": title})


# Figures as the console prints them everywhere: times with their zone, counts with separators,
# p- and q-values a reader can compare (docs/reference/bias.md, Significance).
def count_column(field: str, description: str = "") -> Callable[[admin.ModelAdmin, object], str]:
    """A changelist column of an integer field with thousands separators ("3,366", not Django's
    "3366"), sorted by the field."""

    def column(model_admin: admin.ModelAdmin, obj: object) -> str:
        return count(getattr(obj, field))

    column.__name__ = f"{field}_count"
    return admin.display(description=description or field.replace("_", " "), ordering=field)(column)


def reviewer_url(customer_id: str, user_id: str) -> str:
    """The console's page of one reviewer (their figures, decisions and alerts)."""
    query = urlencode({"customer": customer_id, "user": user_id})
    return f"{reverse('admin:console-page', kwargs={'name': 'reviewer'})}?{query}"


def reviewer_window_url(customer_id: str, user_id: str, first: dt.date, last: dt.date) -> str:
    """The reviewer's page over the days [first, last] (a list's window carried to the page)."""
    window = urlencode({"from": first.isoformat(), "to": last.isoformat()})
    return f"{reviewer_url(customer_id, user_id)}&{window}"


def reviewer_link(customer_id: str, user_id: str | None) -> str:
    """A reviewer's id as a link to their page, wherever the console names a reviewer."""
    if not user_id:
        return "-"
    return format_html('<a class="tc-reviewer" href="{}">{}</a>', reviewer_url(customer_id, user_id), user_id)


class ReviewerRow(Protocol):
    """A row that names a reviewer of an organisation."""

    @property
    def customer_id(self) -> str: ...

    @property
    def user_id(self) -> str | None: ...


def reviewer_column(description: str = "user id") -> Callable[[admin.ModelAdmin, ReviewerRow], str]:
    """A changelist column (or read-only field) of a row's `user_id` as a link to the reviewer's
    page, sorted by the id."""

    def reviewer(model_admin: admin.ModelAdmin, obj: ReviewerRow) -> str:
        return reviewer_link(obj.customer_id, obj.user_id)

    return admin.display(description=description, ordering="user_id")(reviewer)


def when(value: dt.datetime | str | None) -> str:
    """A time in UTC with its zone ("2026-11-25 21:16 UTC"); an ISO string (JSON figures) too."""
    if not value:
        return "-"
    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else value
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, dt.UTC)
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def when_stacked(value: dt.datetime | None) -> str:
    """A time in UTC as its day over its minute and zone, for a narrow list column: the day and
    the time never break inside."""
    if value is None:
        return "-"
    day, minute = when(value).split(" ", 1)
    return format_html('<span class="tc-nowrap">{}</span><br><span class="tc-nowrap">{}</span>', day, minute)


def count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def p_text(value: float | None) -> str:
    """A p- or q-value as a report prints it ("under 0.001", else three decimals); "not tested"
    when null."""
    return "not tested" if value is None else p_value_text(value)


def period_text(time_period: dict | None) -> str:
    """A report's period as requested ("2026-10-28 to 2026-11-26", both days included)."""
    start, end = (time_period or {}).get("from"), (time_period or {}).get("to")
    if not start or not end:
        return "-"
    start, end = (when(v) if "T" in str(v) else str(v) for v in (start, end))
    return f"{start} to {end}"


def score_text(value: float | None) -> str:
    """A trust score on the API's scale, 0 to 1, with two decimals, as on every console page."""
    return "not measured" if value is None else f"{value:.2f}"
