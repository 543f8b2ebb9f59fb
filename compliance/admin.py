"""Reports in the staff console: the exports with status, size and a download link, and a
"request a report" form that calls the same service as POST /export (an auditor can fetch
a report without the API)."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseBase
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html

from compliance import services
from compliance.catalogue import FORMATS, TEMPLATES
from compliance.exceptions import ExportNotFound
from compliance.inputs import CATEGORIES, export_request_parse
from compliance.models import ExportJob
from compliance.views import export_file_response
from config.admin import ReadOnlyAdmin, period_text, request_page, when
from config.admin_scope import scope_form
from config.exceptions import DomainError
from keys.models import Customer

PER_PERSON_PERMISSION = "oversight.view_reviewer_figures"  # docs/reference/oversight.md, Who sees what


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


class ExportRequestForm(forms.Form):
    customer = forms.ModelChoiceField(queryset=Customer.objects.order_by("pk"))
    template = forms.ChoiceField(choices=[(t["id"], t["name"]) for t in TEMPLATES])
    format = forms.ChoiceField(choices=[(f, f.upper()) for f in FORMATS], initial="pdf")
    period_from = forms.DateField(label="From", widget=forms.DateInput(attrs={"type": "date"}))
    period_to = forms.DateField(label="To (inclusive)", widget=forms.DateInput(attrs={"type": "date"}))
    user_ids = forms.CharField(
        required=False, label="Reviewers", help_text="User ids, comma-separated; empty: all."
    )
    model_ids = forms.CharField(
        required=False, label="Models", help_text="Model ids, comma-separated; empty: all."
    )
    calibration = forms.MultipleChoiceField(
        required=False,
        choices=[(c, c) for c in CATEGORIES],
        widget=forms.CheckboxSelectMultiple,
        help_text="Only decisions of these calibration categories; none ticked: all.",
    )

    def __init__(self, *args, per_person: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.per_person = per_person

    def clean_user_ids(self) -> str:
        # The team figures of named reviewers are their own: a report narrowed to reviewers needs
        # the permission to see oversight figures per reviewer.
        text = self.cleaned_data["user_ids"]
        if _ids(text) and not self.per_person:
            raise forms.ValidationError(
                "Narrowing a report to named reviewers needs the permission to see oversight "
                "figures per reviewer (the oversight per-person figures group): their review effort "
                "and vigilance figures would be theirs alone."
            )
        return text


WITHHELD_DOWNLOAD = (
    "This report holds oversight figures per reviewer (it was requested with an API key or by "
    "someone allowed to see them): only members of the oversight per-person figures group may "
    "download it. Request the report yourself: yours carries the team's figures."
)


def withheld_from(request: HttpRequest, job: ExportJob) -> bool:
    """Whether the job's file holds per-reviewer oversight figures the requester may not see (the
    csv, the decision log, holds none)."""
    return job.per_person_figures and job.format != "csv" and not request.user.has_perm(PER_PERSON_PERMISSION)


@admin.register(ExportJob)
class ExportJobAdmin(ReadOnlyAdmin):
    # The file link next to the id, so it is on screen at laptop widths; when it finished is on the
    # job's page (with it the last column was cut at 1,400 px).
    list_display = [
        "id",
        "download",
        "customer",
        "report",
        "status",
        "verdict",
        "size",
        "created",
    ]
    list_filter = ["status", "template", "format", "compliance_status"]
    search_fields = ["=id", "=customer__id"]
    date_hierarchy = "created_at"
    ordering = ["-created_at"]
    # The job's page in words: the period as dates (not the stored JSON, nor the exclusive end
    # instant), the filters as text, the size with separators (docs/architecture.md, console).
    fieldsets = [
        ("Report", {"fields": [("customer", "template", "format"), "period", "filters_text",
                               ("compliance_status", "size"), "download"]}),
        ("Processing", {"fields": [("status", "attempts"), "error", ("requested_by", "per_person_figures"),
                                   ("created_at", "started_at", "completed_at")]}),
        ("Record", {"classes": ["collapse"], "fields": ["id", "file_name", "sha256", "lease_until"]}),
    ]  # fmt: skip
    readonly_fields = [f.name for f in ExportJob._meta.fields] + [
        "download",
        "period",
        "filters_text",
        "size",
    ]

    @admin.display(description="filters")
    def filters_text(self, job: ExportJob) -> str:
        names = {"user_ids": "reviewers", "model_ids": "models", "calibration": "calibration categories"}
        parts = [f"{names.get(k, k)}: {', '.join(map(str, v))}" for k, v in (job.filters or {}).items() if v]
        return "; ".join(parts) or "none: every decision of the period"

    def has_add_permission(self, request, obj=None):
        return request.user.has_perm("compliance.add_exportjob")

    @admin.display(description="period (UTC days)")
    def period(self, job: ExportJob) -> str:
        return period_text(job.time_period)

    @admin.display(description="report and period (UTC days)", ordering="template")
    def report(self, job: ExportJob) -> str:
        # Two reports of one template differ by their period: both in one column.
        return format_html("{}<br>{}", job.template, period_text(job.time_period))

    @admin.display(description="requested", ordering="created_at")
    def created(self, job: ExportJob) -> str:
        return when(job.created_at)

    @admin.display(description="compliance", ordering="compliance_status")
    def verdict(self, job: ExportJob) -> str:
        return job.compliance_status.replace("_", " ") if job.compliance_status else "-"

    @admin.display(description="size")
    def size(self, job: ExportJob) -> str:
        if job.size_bytes is None:
            return "-"
        return f"{job.size_bytes / 1024:,.0f} KiB" if job.size_bytes >= 1024 else f"{job.size_bytes} B"

    @admin.display(description="file")
    def download(self, job: ExportJob) -> str:
        if job.status != ExportJob.Status.COMPLETED:
            return job.error[:80] if job.error else "-"
        url = reverse("admin:compliance_exportjob_download", args=[job.pk])
        return format_html('<a href="{}">Download {}</a>', url, job.format.upper())

    def get_urls(self):
        extra = [
            path(
                "<str:export_id>/download/",
                self.admin_site.admin_view(self.download_view),
                name="compliance_exportjob_download",
            ),
        ]
        return extra + super().get_urls()

    def download_view(self, request: HttpRequest, export_id: str) -> HttpResponseBase:
        if not self.has_view_permission(request):
            raise PermissionDenied
        job = get_object_or_404(self.get_queryset(request), pk=export_id, status=ExportJob.Status.COMPLETED)
        if withheld_from(request, job):
            messages.error(request, WITHHELD_DOWNLOAD)
            return redirect("admin:compliance_exportjob_changelist")
        try:
            return export_file_response(job)
        except ExportNotFound as exc:
            raise Http404(exc.detail) from exc

    def add_view(self, request, form_url="", extra_context=None):
        """Request a report: the same validation and service as POST /export."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        per_person = request.user.has_perm(PER_PERSON_PERMISSION)
        form = scope_form(request, ExportRequestForm(request.POST or None, per_person=per_person))
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            filters = {
                "user_ids": _ids(data["user_ids"]),
                "model_ids": _ids(data["model_ids"]),
                "calibration": data["calibration"],
            }
            body = {
                "template": data["template"],
                "format": data["format"],
                "time_period": {"from": data["period_from"].isoformat(), "to": data["period_to"].isoformat()},
                "filters": {k: v for k, v in filters.items() if v},
            }
            try:
                parsed = export_request_parse(body)
                job = services.export_request(
                    customer=data["customer"],
                    template=parsed.template,
                    format=parsed.format,
                    start=parsed.start,
                    end=parsed.end,
                    time_period=parsed.time_period,
                    filters=parsed.filters,
                    requested_by=f"staff:{request.user.get_username()}",
                    per_person_figures=per_person,
                )
            except DomainError as exc:
                form.add_error(None, exc.detail)
            else:
                self.log_addition(request, job, [{"added": {}}])
                messages.success(
                    request, f"Report {job.pk} requested; it appears here when a worker has rendered it."
                )
                return redirect("admin:compliance_exportjob_changelist")
        return request_page(
            self,
            request,
            title="Request a report",
            form=form,
            template="admin/compliance/exportjob/request.html",
        )


from compliance import profile_admin  # noqa: E402,F401  (registers the system profiles' pages)
