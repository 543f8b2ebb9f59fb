"""Writes for bias detection and the subgroup statistics store (the store itself is
`bias.stats`, the analysis `bias.detection`).

The decision pipeline counts each decision write in the statistics in the same transaction
(bias.contributions, registered with audit's registry), so the statistics never drift from
the decisions. Every write that can change what a decision contributes takes the
per-decision lock first (see `bias.stats`).
"""

import datetime as dt
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from audit import selectors as audit_selectors
from audit import services as audit_services
from bias import selectors as bias_selectors
from bias.detection import Detection, analysis
from bias.domain import (
    DEFAULT_FAVORABLE_VALUES,
    DETECTION_WINDOW_DAYS,
    normalize_value,
    subgroups_object,
    worst,
)
from bias.models import SEVERITY_RANK, BiasAlert, BiasAlertFinding, ModelFavorableValues, SubgroupAttachment
from bias.stats import Deltas, attachment_get, counted_attributes, decision_state, lock_decision, upsert_stats
from bias.subgroup_counts import subgroup_counts
from keys.models import Customer

if TYPE_CHECKING:
    from audit.models import Decision


def subgroups_attach(
    *, customer: Customer, decision_id: str, attributes: dict[str, str]
) -> "Decision | None":
    """Attach (or replace) a decision's subgroups. When the decision is already logged its
    counts move from the old attributes to the new ones and a `subgroups_attached` entry
    records the attachment in the audit trail; otherwise the subgroups wait in the pending row
    until the decision arrives. A vigilance probe's subgroups are kept (and recorded) but
    counted in no statistic (docs/reference/oversight.md). Returns the decision or None."""
    with transaction.atomic():
        lock_decision(customer.pk, decision_id)
        decision = audit_selectors.decision_get(customer, decision_id)
        attachment = attachment_get(customer.pk, decision_id)
        counts = decision is not None and decision.probe_kind is None
        if decision is None or decision.probe_kind is not None:
            if attachment is not None and attachment.attributes == attributes:
                return decision  # the same pending (or probe's) subgroups again
        else:
            old = counted_attributes(decision, attachment)
            if old == attributes:
                return decision  # the same subgroups again: nothing moves
            deltas = Deltas()
            state = decision_state(decision)
            deltas.add(state, old, -1)
            deltas.add(state, attributes, +1)
            upsert_stats(customer.pk, deltas)
        now = timezone.now()
        if decision is not None:
            audit_services.subgroups_attached_record(
                customer=customer, decision=decision, subgroups=subgroups_object(attributes), at=now
            )
        if attachment is None:
            SubgroupAttachment.objects.create(
                customer=customer,
                decision_id=decision_id,
                attributes=attributes,
                counted=counts,
                created_at=now,
                updated_at=now,
            )
        else:
            SubgroupAttachment.objects.filter(pk=attachment.pk).update(
                attributes=attributes, counted=counts, updated_at=now
            )
        return decision


def bias_detect(*, customer: Customer, decision_id: str, attributes: dict[str, str]) -> Detection:
    """POST /detect-bias (docs/reference/bias.md): attach the subgroups, then analyse each attribute present
    over the customer's decisions of the same model (all models when the decision has none
    or is not logged yet) in the last 30 days (whole UTC days: from the day containing now
    minus 30 days). Stores a bias alert when the analysis has a finding and fires bias.detected
    for medium and above, in the same transaction."""
    from webhooks.services import event_emit

    with transaction.atomic():
        decision = subgroups_attach(customer=customer, decision_id=decision_id, attributes=attributes)
        model_id = (decision.model_id or None) if decision is not None else None
        now = timezone.now()
        since = (now - dt.timedelta(days=DETECTION_WINDOW_DAYS)).date()
        by_attribute = subgroup_counts(
            customer=customer,
            attributes=sorted(attributes),
            model_id=model_id,
            from_day=since,
            to_day=now.date(),
        )
        findings, comparisons = analysis({a: by_attribute.get(a, []) for a in attributes})
        severity = worst([f["severity"] for f in findings])
        alert = None
        if findings:  # only a finding (a gap of at least low, q < 0.05) is bias: an alert
            bias_types = sorted({f["bias_type"] for f in findings})
            alert_attributes = sorted({f["attribute"] for f in findings})
            alert = BiasAlert.objects.create(
                customer=customer,
                decision_id=decision_id,
                model_id=model_id,
                severity=severity,
                bias_types=bias_types,
                attributes=alert_attributes,
                findings=findings,
                created_at=now,
            )
            BiasAlertFinding.objects.bulk_create(
                BiasAlertFinding(
                    alert=alert,
                    bias_type=f["bias_type"],
                    attribute=f["attribute"],
                    group_value=f["group"],
                    reference_group=f["reference_group"],
                    severity=f["severity"],
                    value=f["value"],
                    p_value=f["p_value"],
                    q_value=f["q_value"],
                )
                for f in findings
            )
            if SEVERITY_RANK[severity] >= SEVERITY_RANK["medium"]:
                event_emit(
                    customer=customer,
                    type="bias.detected",
                    data={
                        "alert_id": alert.id,
                        "decision_id": decision_id,
                        "model_id": model_id,
                        "severity": severity,
                        "bias_types": bias_types,
                        "attributes": alert_attributes,
                    },
                )
        return {
            "decision_id": decision_id,
            "bias_detected": alert is not None,
            "severity": severity,
            "findings": findings,
            "comparisons": comparisons,
            "alert_id": alert.id if alert else None,
            "analyzed_at": now,
        }


# --- favourable values (docs/reference/bias.md, Favourable values) ---------------------------


def _favourable_append(
    customer_id: str, *, model_id: str, values: list[str], previous: list[str], staff_user: str | None
) -> None:
    if values != previous:
        audit_services.settings_changed_append(
            customer_id,
            setting=audit_services.FAVOURABLE_VALUES,
            model_id=model_id,
            values=values,
            previous=previous,
            staff_user=staff_user,
        )


def favourable_values_save(*, row: ModelFavorableValues, staff_user: str | None = None) -> None:
    """Save a model's favourable values (new or changed): a change of the values in force for
    that model appends a `settings_changed` entry with them and the previous ones (its row moved
    to another model: the old model's values fall back to the default list, an entry too)."""
    with transaction.atomic():
        before = (
            ModelFavorableValues.objects.select_for_update().filter(pk=row.pk).first() if row.pk else None
        )
        customer = Customer.objects.get(pk=row.customer_id)
        previous = bias_selectors.favorable_values(customer=customer, model_id=row.model_id)
        row.updated_at = timezone.now()
        row.save()
        now = bias_selectors.favorable_values(customer=customer, model_id=row.model_id)
        _favourable_append(
            row.customer_id, model_id=row.model_id, values=now, previous=previous, staff_user=staff_user
        )
        if before is not None and (before.customer_id, before.model_id) != (row.customer_id, row.model_id):
            _favourable_append(
                before.customer_id,
                model_id=before.model_id,
                values=list(DEFAULT_FAVORABLE_VALUES),
                previous=sorted({normalize_value(v) for v in before.values or [] if normalize_value(v)}),
                staff_user=staff_user,
            )


def favourable_values_delete(*, row: ModelFavorableValues, staff_user: str | None = None) -> None:
    """Delete a model's favourable values: the default list applies again, and a change of the
    values in force appends a `settings_changed` entry."""
    with transaction.atomic():
        customer = Customer.objects.get(pk=row.customer_id)
        previous = bias_selectors.favorable_values(customer=customer, model_id=row.model_id)
        row.delete()
        _favourable_append(
            customer.pk,
            model_id=row.model_id,
            values=list(DEFAULT_FAVORABLE_VALUES),
            previous=previous,
            staff_user=staff_user,
        )
