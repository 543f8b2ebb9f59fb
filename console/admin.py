"""Registers the staff console's overview panels and pages with the admin site (autodiscovered),
and the read-only list of Django's admin log."""

from django.contrib import admin
from django.contrib.admin.models import LogEntry

from config.admin import ReadOnlyAdmin
from console import drift_admin, oversight_pages, overview, pages  # noqa: F401 (imported for their registrations)


@admin.register(LogEntry)
class LogEntryAdmin(ReadOnlyAdmin):
    """What every staff user did in this console (Django's own log of admin changes and actions)."""

    list_display = ["action_time", "user", "content_type", "object_repr", "action_flag", "change_message"]
    list_filter = ["action_flag", "content_type", "user"]
    search_fields = ["object_repr", "change_message", "user__username"]
    date_hierarchy = "action_time"
    list_select_related = ["user", "content_type"]
