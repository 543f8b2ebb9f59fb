"""Pages of the staff console that no single model list can show."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from calibration import selectors as calibration_selectors
from calibration import windows as calibration_windows
from calibration.documents import UserRow
from config.admin import reviewer_window_url
from config.admin_site import console_page
from config.inputs import lenient_choice
from console.organisations import organisation_choices, organisation_picked


class UserRowPage(UserRow):
    page: str  # the reviewer's page over the same window


WINDOWS = (90, 30)  # 90: the calibration reference's window, the one the API's risk users use


@console_page(
    name="user-calibration",
    title="User calibration (risk users first)",
    permission="calibration.view_userdailyaggregate",
)
def user_calibration(request: HttpRequest) -> HttpResponse:
    customers = organisation_choices(request, limit=200)
    customer = organisation_picked(request, customers)
    window = lenient_choice(request.GET.get("days"), WINDOWS)
    model_id = request.GET.get("model") or None
    users: list[UserRowPage] = []
    recalibrated = False
    if customer is not None:
        days = calibration_selectors.DayRange.last_days(window)
        rows, recalibrated = calibration_windows.user_calibration_window(
            customer, days=days, model_id=model_id
        )
        users = [
            {**user, "page": reviewer_window_url(customer.pk, user["user_id"], days.start, days.end)}
            for user in rows
        ]
    context = {
        **admin.site.each_context(request),
        "title": "User calibration",
        "subtitle": None,
        "customers": customers,
        "customer": customer,
        "window": window,
        "windows": WINDOWS,
        "model_id": model_id or "",
        "users": users,
        "recalibrated": recalibrated,
        "at_risk": sum(1 for u in users if u["at_risk"]),
    }
    request.current_app = admin.site.name
    return TemplateResponse(request, "console/admin/user_calibration.html", context)
