"""The Oversight group's drift pages (docs/reference/drift.md): the monitors, with their parameters,
baseline fit, calibration and chart, and the alarms, open first, with their run and the
Acknowledge form. Acknowledging calls the same service as POST /drift-alarms/{id}/acknowledge
and records `staff:<username>`. A reviewer's monitors and alarms (worker monitoring) need
oversight.view_reviewer_figures; without it staff see the organisation's and a count."""

import base64

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from compliance.charts import drift_chart
from config.admin import ReadOnlyAdmin, reviewer_link, when
from config.admin_scope import scope_form
from config.exceptions import DomainError
from console import drift_forms
from drift import reporting
from drift import services as drift_services
from drift.charts import RELIANCE_CHARTS, Fit, Sprt, follow_probability
from drift.inputs import AcknowledgeInput
from drift.models import DriftAlarm, DriftMonitor, DriftPoint

PER_PERSON = "oversight.view_reviewer_figures"
ACKNOWLEDGE = "drift.acknowledge_alarm"
DISPOSITIONS = [
    "false_alarm",
    "reviewer_coached",
    "workload_adjusted",
    "model_retrained",
    "use_suspended",
    "other",
]
CHART_POINTS = 200


def _per_person(request: HttpRequest) -> bool:
    return request.user.has_perm(PER_PERSON)


def _watches(customer_id: str, chart: str, scope: str, user_id: str | None, model_id: str | None) -> str:
    """What a monitor watches; a reviewer's id links to their page."""
    if scope == "user":
        return format_html(
            "{} of reviewer {}, {}",
            chart.replace("_", " "),
            reviewer_link(customer_id, user_id),
            model_id or "every model",
        )
    return f"{chart.replace('_', ' ')} of organisation, {model_id or 'every model'}"


def _sprt(monitor: DriftMonitor) -> Sprt:
    given = monitor.sprt or {}
    defaults = Sprt()
    return Sprt(*(float(given.get(name, getattr(defaults, name))) for name in ("p0", "p1", "alpha", "beta")))


def _chart_uri(points: list[DriftPoint], monitor: DriftMonitor, title: str) -> str | None:
    if not points:
        return None
    rows: list[dict[str, object]] = [
        {
            "index": p.index,
            "restart": p.restart,
            "signal": p.signal,
            "conclusion": p.conclusion,
            **({"x": p.x} if p.x is not None else {"llr_sum": p.llr_sum}),
        }
        for p in points
    ]
    if monitor.chart == "probe_sprt":
        sprt = _sprt(monitor)
        svg = drift_chart(rows, h=sprt.upper_bound, title=title, lower=sprt.lower_bound)
    else:
        svg = drift_chart(rows, h=float(monitor.h or 0.0), title=title)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


@admin.register(DriftMonitor)
class DriftMonitorAdmin(ReadOnlyAdmin):
    list_display = ["name", "customer", "watches", "status", "limit", "alarms_raised", "created"]
    list_filter = ["chart", "scope", "status", "customer"]
    search_fields = ["id", "name", "user_id", "model_id"]
    ordering = ["-created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[DriftMonitor]:
        rows = super().get_queryset(request).filter(deleted_at__isnull=True)
        return rows if _per_person(request) else rows.exclude(scope="user")

    @admin.display(description="watches")
    def watches(self, obj: DriftMonitor) -> str:
        return _watches(obj.customer_id, obj.chart, obj.scope, obj.user_id, obj.model_id)

    @admin.display(description="limit")
    def limit(self, obj: DriftMonitor) -> str:
        if obj.chart == "probe_sprt":
            return "SPRT"
        return "no h yet" if obj.h is None else f"h {obj.h:g} ({obj.h_source})"

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: DriftMonitor) -> str:
        return when(obj.created_at)

    def has_add_permission(self, request: HttpRequest, obj: DriftMonitor | None = None) -> bool:
        return request.user.has_perm(drift_forms.ADD)

    def _form_page(
        self, request: HttpRequest, form: forms.Form, title: str, explanation: str, submit: str
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": title,
            "form": form,
            "explanation": explanation,
            "submit": submit,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "console/admin/drift_monitor_form.html", context)

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        """A new monitor through POST /drift-monitors' service (the same drift_monitor.configured entry)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = scope_form(request, drift_forms.MonitorCreateForm(request.POST or None))
        if request.method == "POST" and form.is_valid():
            monitor = form.save(per_person=_per_person(request))
            if monitor is not None:
                self.log_addition(
                    request, monitor, f"Drift monitor created: {monitor.chart}, {monitor.scope}"
                )
                messages.success(request, f"Drift monitor {monitor.name} created ({monitor.pk}).")
                return HttpResponseRedirect(reverse("admin:drift_driftmonitor_change", args=[monitor.pk]))
        explanation = (
            "The monitor starts with its baseline, then charts every decision it watches "
            "(docs/reference/drift.md). The request is checked and made as POST /v1/drift-monitors makes it, "
            "and the audit trail records it."
        )
        return self._form_page(request, form, "Add a drift monitor", explanation, "Create monitor")

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        """Delete through DELETE /drift-monitors/{id}'s service: the monitor stops, its alarms stay."""
        monitor = self.get_object(request, unquote(object_id))
        if monitor is None:
            raise Http404(f"No such {self.opts.verbose_name}.")
        if not request.user.has_perm(drift_forms.DELETE):
            raise PermissionDenied
        if request.method == "POST":
            drift_services.monitor_delete(monitor=monitor)
            self.log_deletions(request, DriftMonitor.objects.filter(pk=monitor.pk))
            messages.success(request, f"Drift monitor {monitor.name} deleted; its alarms stay.")
            return HttpResponseRedirect(reverse("admin:drift_driftmonitor_changelist"))
        explanation = format_html(
            "Delete {} ({})? It stops charting; its alarms and its entries in the audit trail stay, and the "
            "audit trail records the deletion.",
            monitor.name,
            self.watches(monitor),
        )
        return self._form_page(request, forms.Form(), f"Delete {monitor.name}", explanation, "Delete monitor")

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, object] | None = None,
    ) -> HttpResponse:
        monitor = self.get_object(request, unquote(object_id))  # the admin's URLs quote "_" as "_5F"
        if monitor is None or not self.has_view_permission(request, monitor):
            raise Http404(f"No such {self.opts.verbose_name}.")
        change_form = None
        if request.user.has_perm(drift_forms.CHANGE):
            change_form = drift_forms.MonitorChangeForm(request.POST or None, monitor=monitor)
            if request.method == "POST" and change_form.is_valid():
                saved = change_form.save()
                if saved is not None:
                    monitor, changed = saved
                    if changed:
                        self.log_change(request, monitor, f"Changed {', '.join(changed)}")
                    messages.success(request, f"Changed: {', '.join(changed) or 'nothing'}.")
                    return HttpResponseRedirect(request.path)
        elif request.method == "POST":
            raise PermissionDenied
        points = reporting.last_points(monitor, CHART_POINTS)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": monitor.name,
            "monitor": monitor,
            "watches": self.watches(monitor),
            "parameters": _parameters(monitor),
            "fit": _fit_rows(monitor),
            "calibration": monitor.calibration,
            "chart": _chart_uri(points, monitor, f"{monitor.name}: the last {len(points)} points"),
            "points": points,
            "alarms": monitor.alarms.order_by("-raised_at")[:20],
            "change_form": change_form,
            "may_delete": request.user.has_perm(drift_forms.DELETE),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "console/admin/drift_monitor.html", context)


def _parameters(m: DriftMonitor) -> list[tuple[str, str]]:
    rows = [
        ("Organisation", str(m.customer_id)),
        ("Chart", m.chart),
        ("Watches", _watches(m.customer_id, m.chart, m.scope, m.user_id, m.model_id)),
    ]
    rows.append(("Model version", m.model_version or "every version"))
    if m.chart == "probe_sprt":
        sprt = _sprt(m)
        rows.append(("SPRT", f"p0 {sprt.p0:g}, p1 {sprt.p1:g}, alpha {sprt.alpha:g}, beta {sprt.beta:g}; bounds "
                             f"{sprt.upper_bound:.6f} and {sprt.lower_bound:.6f}; Wald's expected probes "
                             f"{sprt.asn_h0:.1f} (H0), {sprt.asn_h1:.1f} (H1)"))  # fmt: skip
    else:
        rows.append(("Odds ratio tuned to (R_A)", f"{m.odds_ratio:g}"))
        rows.append(("Alarm limit h", "none yet" if m.h is None else f"{m.h:g} ({m.h_source})"))
        rows.append(("ARL0 target", f"{m.arl0_target:,}" if m.arl0_target else "none (h given)"))
    baseline = m.baseline or {}
    if baseline:
        rows.append(("Baseline", f"{baseline.get('mode')}, {baseline.get('collected', 0):,} of "
                                 f"{baseline.get('decisions'):,} points, completed {baseline.get('completed_at') or 'not yet'}"))  # fmt: skip
    rows += [
        ("Status", m.status),
        ("Chart points", f"{m.chart_points:,}"),
        ("Statistic carried", f"{m.chart_statistic:.6f}"),
        ("Alarms raised", f"{m.alarms_raised:,}"),
        ("Seed and runs of its calibrations", f"{m.seed}, {m.runs:,}"),
    ]
    return rows


def _fit_rows(m: DriftMonitor) -> list[tuple[str, str]] | None:
    """The baseline fit as the follow probability pi at c = 0.1 to 0.9."""
    fit = (m.baseline or {}).get("fit")
    if m.chart not in RELIANCE_CHARTS or not fit:
        return None
    model = Fit(fit["method"], fit["intercept"], fit["slope"], fit["followed"])
    return [(f"{c / 10:.1f}", f"{follow_probability(model, c / 10):.3f}") for c in range(1, 10)]


class AcknowledgeForm(forms.Form):
    disposition = forms.ChoiceField(choices=[(d, d.replace("_", " ")) for d in DISPOSITIONS])
    note = forms.CharField(
        required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 3, "cols": 60})
    )


@admin.register(DriftAlarm)
class DriftAlarmAdmin(ReadOnlyAdmin):
    list_display = ["id", "customer", "watches", "severity", "excess_text", "signals", "status", "raised"]
    list_filter = ["status", "severity", "chart", "customer"]
    search_fields = ["id", "user_id", "model_id", "decision_id"]
    ordering = ["-status", "-raised_at"]  # open first

    def get_queryset(self, request: HttpRequest) -> QuerySet[DriftAlarm]:
        rows = super().get_queryset(request).select_related("monitor")
        return rows if _per_person(request) else rows.exclude(monitor__scope="user")

    @admin.display(description="watches")
    def watches(self, obj: DriftAlarm) -> str:
        return _watches(obj.customer_id, obj.chart, obj.monitor.scope, obj.user_id, obj.model_id)

    @admin.display(description="excess", ordering="excess")
    def excess_text(self, obj: DriftAlarm) -> str:
        return f"{obj.excess:.2f}"

    @admin.display(description="raised", ordering="raised_at")
    def raised(self, obj: DriftAlarm) -> str:
        return when(obj.raised_at)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, object] | None = None
    ) -> HttpResponse:
        extra = dict(extra_context or {})
        if not _per_person(request):
            hidden = reporting.reviewer_alarm_count()
            extra["subtitle"] = (
                f"{hidden:,} alarm(s) of reviewer monitors are counted but not shown (worker monitoring)."
            )
        return super().changelist_view(request, extra)

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, object] | None = None,
    ) -> HttpResponse:
        alarm = self.get_object(request, unquote(object_id))
        if alarm is None or not self.has_view_permission(request, alarm):
            raise Http404(f"No such {self.opts.verbose_name}.")
        may_acknowledge = request.user.has_perm(ACKNOWLEDGE) and alarm.status == DriftAlarm.Status.OPEN
        form = AcknowledgeForm(request.POST or None)
        if request.method == "POST" and may_acknowledge and form.is_valid():
            try:
                body = AcknowledgeInput(
                    disposition=form.cleaned_data["disposition"], note=form.cleaned_data["note"] or None
                )
                drift_services.alarm_acknowledge(
                    alarm=alarm, body=body, default_by=f"staff:{request.user.get_username()}"
                )
            except (DomainError, ValueError) as exc:
                form.add_error(None, str(getattr(exc, "detail", exc)))
            else:
                messages.success(
                    request, f"Alarm {alarm.pk} acknowledged: {form.cleaned_data['disposition']}."
                )
                return HttpResponseRedirect(request.path)
        points = reporting.run_points(alarm)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Drift alarm {alarm.pk}",
            "alarm": alarm,
            "watches": self.watches(alarm),
            "points": points,
            "chart": _chart_uri(points, alarm.monitor, f"the run of {alarm.pk}"),
            "form": form if may_acknowledge else None,
            "may_acknowledge": request.user.has_perm(ACKNOWLEDGE),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, "console/admin/drift_alarm.html", context)


def reviewer_drift(customer_id: str, user_id: str) -> tuple[list[DriftMonitor], list[DriftAlarm]]:
    """The monitors watching one reviewer and their alarms, open first (the reviewer's page;
    shown only with oversight.view_reviewer_figures)."""
    monitors = DriftMonitor.objects.filter(
        customer_id=customer_id, scope="user", user_id=user_id, deleted_at__isnull=True
    ).order_by("-created_at")
    alarms = DriftAlarm.objects.filter(customer_id=customer_id, monitor__scope="user", user_id=user_id)
    return list(monitors), list(alarms.select_related("monitor").order_by("-status", "-raised_at")[:50])
