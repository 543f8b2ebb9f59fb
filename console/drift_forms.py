"""Creating, changing and deleting drift monitors in the console (docs/reference/drift.md, "In
the staff console"): each form builds the body the API takes, validates it with the API's own body
model (drift.inputs) and calls the same service as POST, PATCH and DELETE /drift-monitors, so the
console's writes append the same drift_monitor.configured entries. A monitor of one reviewer
(scope user) is worker monitoring: only staff with oversight.view_reviewer_figures may create one
(and only they see one to change or delete)."""

from typing import TYPE_CHECKING, Any

from django import forms

from config.bodymodels import body_parse
from config.exceptions import DomainError
from drift import services as drift_services
from drift.charts import CHARTS
from drift.inputs import MonitorCreateInput, MonitorUpdateInput
from keys.models import Customer

if TYPE_CHECKING:
    from drift.models import DriftMonitor

PER_PERSON = "oversight.view_reviewer_figures"
ADD = "drift.add_driftmonitor"
CHANGE = "drift.change_driftmonitor"
DELETE = "drift.delete_driftmonitor"


def _errors(form: forms.Form, exc: DomainError) -> None:
    """A refused body's reasons on the form: on its field where the form has one."""
    problems = exc.errors or [{"message": exc.detail}]
    for problem in problems:
        field = str(problem.get("field") or "").split(".")[0]
        field = {"baseline": "baseline_mode"}.get(field, field)
        form.add_error(field if field in form.fields else None, problem["message"])


class MonitorCreateForm(forms.Form):
    customer = forms.ModelChoiceField(
        queryset=Customer.objects.order_by("pk"), label="Organisation", empty_label=None
    )
    name = forms.CharField(required=False, max_length=200, help_text="Empty: named after what it watches.")
    chart = forms.ChoiceField(choices=[(c, c.replace("_", " ")) for c in CHARTS])
    scope = forms.ChoiceField(
        choices=[("organization", "the organisation"), ("user", "one reviewer")], initial="organization"
    )
    user_id = forms.CharField(
        required=False, label="Reviewer (user id)", help_text="With scope: one reviewer."
    )
    model_id = forms.CharField(required=False, label="Model id", help_text="Empty: every model.")
    model_version = forms.CharField(required=False, help_text="With a model id only. Empty: every version.")
    odds_ratio = forms.FloatField(required=False, help_text="The change in odds the chart is tuned to (R_A).")
    h = forms.FloatField(
        required=False, label="Alarm limit h", help_text="Or calibrate h from an ARL0 target."
    )
    arl0_target = forms.IntegerField(required=False, label="ARL0 target", help_text="100 to 100,000 points.")
    baseline_mode = forms.ChoiceField(
        required=False,
        label="Baseline",
        choices=[
            ("", "the chart's default"),
            ("next", "the next decisions"),
            ("previous", "the previous decisions"),
        ],
    )
    baseline_decisions = forms.IntegerField(required=False, help_text="50 to 10,000 (default 200).")
    enabled = forms.BooleanField(required=False, initial=True)

    def body(self) -> dict[str, object]:
        """The POST /drift-monitors body: the fields given, nothing else."""
        data = self.cleaned_data
        body: dict[str, object] = {"chart": data["chart"], "scope": data["scope"], "enabled": data["enabled"]}
        for name in ("name", "user_id", "model_id", "model_version", "odds_ratio", "h", "arl0_target"):
            if data.get(name) not in (None, ""):
                body[name] = data[name]
        if data.get("baseline_mode") or data.get("baseline_decisions") is not None:
            baseline: dict[str, object] = {"mode": data.get("baseline_mode") or "next"}
            if data.get("baseline_decisions") is not None:
                baseline["decisions"] = data["baseline_decisions"]
            body["baseline"] = baseline
        return body

    def save(self, *, per_person: bool) -> "DriftMonitor | None":
        """The monitor made by the API's service, or None with the reasons on the form."""
        body = self.body()
        if body["scope"] == "user" and not per_person:
            self.add_error(
                "scope", "A monitor of one reviewer needs the oversight per-person figures permission."
            )
            return None
        try:
            parsed = body_parse(MonitorCreateInput, body)
            return drift_services.monitor_create(customer=self.cleaned_data["customer"], body=parsed)
        except DomainError as exc:  # a refused body or a refused monitor: shown on the form
            _errors(self, exc)
            return None


class MonitorChangeForm(forms.Form):
    name = forms.CharField(max_length=200)
    enabled = forms.BooleanField(required=False)
    h = forms.FloatField(
        required=False, label="Alarm limit h", help_text="Given here, it replaces a calibrated h."
    )

    # Any: forms.Form's own arguments, passed on
    def __init__(self, *args: Any, monitor: "DriftMonitor", **kwargs: Any) -> None:
        kwargs["initial"] = {"name": monitor.name, "enabled": monitor.enabled, "h": monitor.h}
        super().__init__(*args, **kwargs)
        self.monitor = monitor
        if monitor.chart == "probe_sprt":
            del self.fields["h"]

    def save(self) -> "tuple[DriftMonitor, list[str]] | None":
        """(the monitor, the fields changed) through the API's PATCH service; None on a refusal."""
        sent = {
            name: value
            for name, value in self.cleaned_data.items()
            if value is not None and value != getattr(self.monitor, name)
        }
        if not sent:
            return self.monitor, []
        try:
            monitor = drift_services.monitor_update(
                monitor=self.monitor, body=body_parse(MonitorUpdateInput, sent)
            )
        except DomainError as exc:  # a refused body: shown on the form
            _errors(self, exc)
            return None
        return monitor, sorted(sent)
