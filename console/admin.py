"""Registers the staff console's overview panels and pages with the admin site (autodiscovered),
the read-only list of Django's admin log, and Access -> Users with each staff user's
organisations."""

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import User

from config.admin import ReadOnlyAdmin
from config.models import StaffOrganisation
from console import (  # noqa: F401 (imported for their registrations)
    drift_admin,
    oversight_pages,
    overview,
    pages,
    reviewer_page,
)


@admin.register(LogEntry)
class LogEntryAdmin(ReadOnlyAdmin):
    """What every staff user did in this console (Django's own log of admin changes and actions)."""

    list_display = ["action_time", "user", "content_type", "object_repr", "action_flag", "change_message"]
    list_filter = ["action_flag", "content_type", "user"]
    search_fields = ["object_repr", "change_message", "user__username"]
    date_hierarchy = "action_time"
    list_select_related = ["user", "content_type"]


class StaffOrganisationInline(admin.TabularInline):
    model = StaffOrganisation
    extra = 1
    verbose_name = "organisation this staff user sees"
    verbose_name_plural = (
        "Organisations this staff user sees and acts on (superusers see every one; "
        "a staff user with none sees none)"
    )


admin.site.unregister(User)


@admin.register(User)
class StaffUserAdmin(UserAdmin):
    """Access -> Users: Django's user pages, with the organisations a staff user is assigned."""

    inlines = [StaffOrganisationInline]
    list_display = ("username", "email", "first_name", "last_name", "is_staff", "organisations")

    @admin.display(description="organisations")
    def organisations(self, user: User) -> str:
        if user.is_superuser:
            return "every one"
        ids = StaffOrganisation.objects.filter(user=user).values_list("customer_id", flat=True)
        return ", ".join(sorted(ids)) or "none"
