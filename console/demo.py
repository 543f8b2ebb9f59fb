"""`seed_demo`: the demo organisation, written through the same services as the API (batch decision
logging, bias detection, fairness signal ingest, alert triage, webhooks, keys), so every figure,
aggregate, hash and alert is what the service itself would have produced."""

import datetime as dt
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.utils import timezone

from audit import platform as audit_platform
from audit import services as audit_services
from bias import services as bias_services
from compliance import selectors as compliance_selectors
from compliance import services as compliance_services
from config.bodymodels import body_parse
from config.exceptions import DomainError
from config.models import StaffOrganisation
from console import demo_data, demo_drift, demo_oversight, demo_signals
from console.permissions import COMPLIANCE_STAFF
from fairness import services as fairness_services
from fairness.inputs import SignalInput
from keys import services as key_services
from keys.models import Customer
from webhooks import services as webhook_services

OFFICER, ADMIN = "demo-officer", "demo-admin"
WEBHOOK_URL = "http://127.0.0.1:9009/trustcal"
WEBHOOK_EVENTS = ["bias.amplification", "bias.detected", "audit.required", "risk_user.identified"]
ACTOR = f"staff:{OFFICER}"
# Bias detection runs for one decision per attribute, as a screening tool would after logging.
DETECTIONS = ("gender", "ethnicity", "age_group")


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # printed once, right now, never stored

    def add(self, line: str) -> None:
        self.lines.append(line)


def _users(report: Report, *, create_users: bool) -> None:
    if not create_users:
        report.add("Staff users: none created (--no-users); use `python manage.py createsuperuser`.")
        return
    for username, superuser in ((ADMIN, True), (OFFICER, False)):
        if not superuser:
            officer = User.objects.filter(username=username).first()
            if officer is not None:
                _officer_of_the_bank(officer, report)
        if User.objects.filter(username=username).exists():
            report.add(f"Staff user {username}: exists, password unchanged "
                       f"(reset it with `python manage.py changepassword {username}`).")  # fmt: skip
            continue
        password = secrets.token_urlsafe(12)
        if superuser:
            User.objects.create_superuser(username, f"{username}@demo-bank.example", password)
        else:
            user = User.objects.create_user(
                username, f"{username}@demo-bank.example", password, is_staff=True
            )
            user.groups.add(Group.objects.get(name=COMPLIANCE_STAFF))
            _officer_of_the_bank(user, report)
        role = "superuser" if superuser else "compliance staff"
        report.secrets.append(f"{username} ({role}) password: {password}")


def _officer_of_the_bank(user: User, report: Report) -> None:
    """The compliance officer sees the demo bank only (docs/reference/access.md, "Staff and
    their organisations")."""
    _, added = StaffOrganisation.objects.get_or_create(user=user, customer_id=demo_data.CUSTOMER)
    if added:
        report.add(f"Staff user {user.get_username()}: assigned to {demo_data.CUSTOMER} (sees it only).")


def _decisions(
    customer: Customer,
    rows: list[dict[str, object]],
    probes: list[demo_oversight.ProbeBody],
    report: Report,
    *,
    older_first: dt.date,
) -> None:
    """The desk's decisions and probes, logged day by day at the time they were made (a minute
    after the day's last one), so the drift charts raise each alarm on its day; the probe alarms
    due for acknowledgement are acknowledged between the days (docs/reference/drift.md)."""
    by_day: dict[str, list[Mapping[str, object]]] = {}
    for row in sorted([*rows, *probes], key=lambda r: str(r["timestamp"])):
        by_day.setdefault(str(row["timestamp"])[:10], []).append(row)
    rejected = 0
    for day in sorted(by_day):
        items = by_day[day]
        at = _parse(str(items[-1]["timestamp"])) + dt.timedelta(seconds=60)
        demo_drift.acknowledge_due(customer, ACTOR, at=at - dt.timedelta(seconds=30), older_first=older_first)
        rejected += audit_services.decisions_log_batch(customer=customer, items=items, at=at).rejected
    if rejected:
        raise RuntimeError(f"{rejected} demo decisions were refused; the demo generator is out of date.")
    reviewers = demo_data.reviewers()
    profile_counts = {p: sum(1 for r in reviewers if r.profile == p) for p, _ in demo_data.REVIEWERS}
    report.add(
        f"Decisions: {len(rows)} of model {demo_data.MODEL} over {demo_data.DAYS} days by {len(reviewers)} "
        f"reviewers ({', '.join(f'{n} {p}' for p, n in profile_counts.items())}), each in the audit trail."
    )
    report.add(demo_oversight.probes_line(probes))


def _parse(timestamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def _month_figures(customer: Customer, first: dt.date, last: dt.date) -> str:
    """The month's figures as POST /trust-score serves them (probes left out, the confidence
    recalibrated when the check rejects it): automation-bias incidents, and the reviewers'
    categories by the demo's profiles."""
    from audit import selectors as audit_selectors
    from calibration import reporting as calibration_reporting

    start = dt.datetime.combine(first, dt.time(), tzinfo=dt.UTC)
    until = start + dt.timedelta(days=(last - first).days + 1)
    decisions = audit_selectors.decision_set(customer, since=start, until=until)
    check, recalibrate = calibration_reporting.recalibration_for(decisions)
    figures, users = calibration_reporting.user_figures(decisions, recalibrate=recalibrate)
    profiles = {r.user_id: r.profile for r in demo_data.reviewers()}
    read: dict[str, dict[str, int]] = {profile: {} for profile, _ in demo_data.REVIEWERS}
    for user in users:
        counts = read[profiles[user["user_id"]]]
        counts[user["category"]] = counts.get(user["category"], 0) + 1
    judged = " against the recalibrated confidence" if recalibrate is not None else ""
    categories = "; ".join(
        f"{profile} {', '.join(f'{n} {c}' for c, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])))}"
        for profile, counts in read.items()
    )
    return (
        f"{figures['automation_bias_incidents']} automation-bias incidents of {figures['scored_decisions']} scored "
        f"decisions{judged} (confidence check: {check['verdict']}); reviewers read {categories}"
    )


def _bias_alerts(customer: Customer, rows: list[dict], report: Report) -> None:
    recent = [r for r in rows if r["model_version"] == "2.3"]
    found = []
    for attribute in DETECTIONS:
        row = next(r for r in reversed(recent) if r["subgroups"][attribute] not in ("male", "white", "35-54"))
        result = bias_services.bias_detect(
            customer=customer,
            decision_id=row["decision_id"],
            attributes={attribute: row["subgroups"][attribute]},
        )
        found.append(f"{attribute}: {result['severity']}")
    report.add(f"Bias detection (POST /detect-bias) on three attributes: {', '.join(found)}.")


def _signals(customer: Customer, rows: list[dict], report: Report, now: dt.datetime) -> None:
    """Each signal is ingested at the time its tool ran, and triaged inside its month, so a
    report of either month shows its alerts with their status history."""
    for plan in demo_signals.PLANS:
        body = demo_signals.signal_body(rows, plan, now=now)
        raised = now - dt.timedelta(days=plan.age_days)
        result = fairness_services.signal_ingest(
            customer=customer, data=body_parse(SignalInput, body), at=raised
        )
        alert = result.alert
        line = (f"Fairlearn {plan.metric} on {plan.attribute} ({plan.privileged} vs {plan.unprivileged}, "
                f"v{plan.version}) = {body['metricValue']:.3f}")  # fmt: skip
        if alert is None:
            report.add(f"{line}: no amplification alert ({result.analysis['status']}).")
            continue
        for step in plan.triage:
            fairness_services.alert_status_update(
                alert=alert, status=step.status, actor=ACTOR, resolution_notes=step.notes,
                resolved_by=ACTOR if step.status != "acknowledged" else None,
                at=raised + dt.timedelta(days=step.days_after),
            )  # fmt: skip
        history = "".join(
            f", {step.status.replace('_', ' ')} {_day(raised + dt.timedelta(days=step.days_after))}"
            for step in plan.triage
        )
        report.add(
            f"{line}: alert {alert.id}, {alert.severity}, score {alert.amplification_score}, raised "
            f"{_day(raised)}{history}{'' if plan.triage else ', open'}."
        )


def _day(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%d")


def _months(customer: Customer, report: Report, now: dt.datetime) -> None:
    """The exact dates of the demo's months and the status an EU AI Act report of each states."""
    older, recent = demo_data.months(now)
    for (first, last), version, why in (
        (older, "2.2", "outcomes known"),
        (recent, "2.3", "no outcome known yet"),
    ):
        status = compliance_selectors.eu_compliance_status(customer=customer, first_day=first, last_day=last)
        report.add(
            f"Model v{version} month {first} to {last} (UTC days, both included; {why}): "
            f"{_month_figures(customer, first, last)}; an EU AI Act report of exactly these dates states {status}."
        )
    report.add(
        "Pick those dates when you request a report: a calendar month mixes the two desks and reads "
        "differently."
    )


def _webhook(customer: Customer, report: Report) -> None:
    try:
        issued = webhook_services.webhook_create(
            customer=customer, url=WEBHOOK_URL, events=WEBHOOK_EVENTS, description="demo: risk team receiver"
        )
    except DomainError as exc:
        report.add(f"Webhook: not created ({exc.detail}). Set WEBHOOK_ALLOW_INSECURE_URLS=true for a receiver "
                   "on this machine, as in the README's quickstart.")  # fmt: skip
        return
    report.add(f"Webhook {issued.webhook.id} -> {WEBHOOK_URL} for {', '.join(WEBHOOK_EVENTS)}.")


def seed(*, create_users: bool = True) -> Report:
    """Create the demo organisation once; on a second run, report what exists and change nothing."""
    report = Report()
    existing = dict(audit_platform.platform_customers_by_decisions(limit=1000)).get(demo_data.CUSTOMER, 0)
    if existing:
        report.add(
            f"Demo organisation {demo_data.CUSTOMER} exists already ({existing} decisions): left as it is."
        )
        # Its months are those of the day it was seeded; the statuses are what a report states now.
        customer = Customer.objects.get(pk=demo_data.CUSTOMER)
        seeded = customer.created_at
        _months(customer, report, seeded)
        _users(report, create_users=create_users)
        return report
    now = timezone.now()
    rows = demo_oversight.timed(demo_data.decisions(now=now))
    probes = demo_oversight.probes(now=now, decisions=len(rows))
    months = demo_data.months(now)
    with transaction.atomic():
        customer, _ = Customer.objects.get_or_create(id=demo_data.CUSTOMER)
        first = dt.datetime.combine(months[0][0], dt.time(), tzinfo=dt.UTC) - dt.timedelta(hours=1)
        report.add(demo_drift.create_monitors(customer, at=first))
        _decisions(customer, rows, probes, report, older_first=months[0][0])
        report.add(demo_drift.alarms_line(customer, months))
        compliance_services.profile_save(
            customer=customer,
            model_id=demo_data.MODEL,
            changes=demo_data.PROFILE,
            replace=True,
            by="seed_demo",
        )
        report.add(
            f"System profile of {demo_data.MODEL}: every field but the provider (the reports print it as not provided)."
        )
        _bias_alerts(customer, rows, report)
        _signals(customer, rows, report, now)
        _months(customer, report, now)
        _webhook(customer, report)
        issued = key_services.api_key_create(
            customer_id=customer.pk, tier="growth", description="demo key",
            actor=key_services.AdminActor(key_id=None, user="seed_demo"),
        )  # fmt: skip
        report.secrets.append(f"API key of {customer.pk}: {issued.value}")
        _users(report, create_users=create_users)
    return report
