"""Erasures and the retention policy (docs/reference/erasure.md): the personal part of
format-2 entries is deleted (salt and personal fields), whatever else names an erased
reviewer is re-keyed to a pseudonym, stored exports that may hold them are deleted, and one
`erasure` entry is appended. No entry hash, tree node or checkpoint changes."""

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Min, Q, QuerySet
from django.utils import timezone

from audit import registry
from audit.apply import entries_append
from audit.chain import entry_seal
from audit.exceptions import ErasureLegalHold, ErasureNotFound
from audit.models import AuditEntry, ChainHead, Decision
from audit.models_erasure import (
    ERASED_FINGERPRINT,
    LEGAL_BASIS_NAMES,
    PSEUDONYM_PREFIX,
    Erasure,
    RetentionPolicy,
)
from config.timeutils import isoformat
from keys.models import Customer
from webhooks.services import event_emit, events_rekey_user

LEGAL_BASES = tuple(LEGAL_BASIS_NAMES)
# The entries that snapshot a decision, and so hold its personal fields.
_PERSONAL_TYPES = (AuditEntry.Type.DECISION, AuditEntry.Type.OUTCOME, AuditEntry.Type.SUBGROUPS_ATTACHED)


@dataclass(frozen=True)
class ErasureResult:
    erasure: Erasure
    created: bool  # False: the same request again, which erased nothing more


def _digest(customer_id: str, target: str, value: str) -> str:
    """Keyed by the service's secret, so the digest of a low-entropy id cannot be reversed by
    trying every value."""
    message = f"{customer_id}\x00{target}\x00{value}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def ranges(sequences: Sequence[int]) -> list[list[int]]:
    """Sorted sequences as [first, last] runs."""
    out: list[list[int]] = []
    for sequence in sequences:
        if out and out[-1][1] == sequence - 1:
            out[-1][1] = sequence
        else:
            out.append([sequence, sequence])
    return out


def retention_policy_get(*, customer: Customer) -> RetentionPolicy:
    policy = RetentionPolicy.objects.filter(customer=customer).first()
    return policy if policy is not None else RetentionPolicy(customer=customer)


def retention_policy_set(
    *, customer: Customer, min_days: int, max_days: int | None, legal_hold: bool
) -> RetentionPolicy:
    policy, _ = RetentionPolicy.objects.update_or_create(
        customer=customer,
        defaults={
            "min_days": min_days,
            "max_days": max_days,
            "legal_hold": legal_hold,
            "updated_at": timezone.now(),
        },
    )
    return policy


def _matching(customer: Customer, target: str, value: str) -> QuerySet[AuditEntry]:
    column = "subject_id" if target == Erasure.Target.SUBJECT_ID else "user_id"
    return AuditEntry.objects.filter(
        customer=customer, type__in=_PERSONAL_TYPES, erased=False, format=2, **{column: value}
    )


def erasure_request(
    *,
    customer: Customer,
    target: str,
    value: str,
    reason: str,
    legal_basis: str,
    override_minimum: bool = False,
    requested_by: str = "",
) -> ErasureResult:
    """POST /erasures: erase now, or schedule until the entries reach the policy's minimum
    retention; refused (and recorded) under legal hold; the same request again when nothing
    more matches answers the earlier erasure (created=False)."""
    now = timezone.now()
    policy = retention_policy_get(customer=customer)
    digest = _digest(customer.pk, target, value)
    common = {
        "customer": customer,
        "target": target,
        "target_digest": digest,
        "reason": reason,
        "legal_basis": legal_basis,
        "override_minimum": override_minimum,
        "requested_by": requested_by,
    }
    if policy.legal_hold:
        refused = Erasure.objects.create(status=Erasure.Status.REFUSED, completed_at=now, **common)
        raise ErasureLegalHold(
            f"The audit trail is under legal hold: erasure {refused.pk} was refused and recorded.",
            erasure_id=refused.pk,
        )
    with transaction.atomic():
        matching = _matching(customer, target, value)
        span = matching.aggregate(youngest=Max("logged_at"))
        if span["youngest"] is None:
            earlier = (
                Erasure.objects.filter(customer=customer, target_digest=digest)
                .exclude(status=Erasure.Status.REFUSED)
                .order_by("-created_at")
                .first()
            )
            if earlier is not None:
                return ErasureResult(earlier, created=False)
        due = span["youngest"] + dt.timedelta(days=policy.min_days) if span["youngest"] else now
        if due > now and not override_minimum:
            erasure = Erasure.objects.create(
                status=Erasure.Status.SCHEDULED,
                pending_value=value,
                execute_after=due,
                entries=matching.count(),
                **common,
            )
            return ErasureResult(erasure, created=True)
        erasure = Erasure(status=Erasure.Status.COMPLETED, execute_after=now, **common)
        _execute(erasure, value)
    return ErasureResult(erasure, created=True)


def _execute(erasure: Erasure, value: str | None, *, older_than: dt.datetime | None = None) -> None:
    """Erase (inside the caller's transaction) and record: the erasure row, its entry, its event.
    A retention run erases the entries logged before `older_than`."""
    customer = erasure.customer
    now = timezone.now()
    if erasure.target == Erasure.Target.RETENTION:
        rows = AuditEntry.objects.filter(
            customer=customer, type__in=_PERSONAL_TYPES, erased=False, format=2, logged_at__lt=older_than
        )
    else:
        assert value is not None
        rows = _matching(customer, erasure.target, value)
    found = list(rows.order_by("sequence").values_list("pk", "sequence", "decision_id"))
    sequences = [sequence for _, sequence, _ in found]
    decisions = sorted({pk for _, _, pk in found if pk is not None})
    pseudonym = None
    if erasure.target == Erasure.Target.USER_ID:
        pseudonym = f"{PSEUDONYM_PREFIX}{secrets.token_hex(4)}"
    span = Decision.objects.filter(pk__in=decisions).aggregate(first=Min("timestamp"), last=Max("timestamp"))
    subject_decisions: tuple[str, ...] = ()
    if erasure.target != Erasure.Target.USER_ID:
        subject_decisions = tuple(
            Decision.objects.filter(pk__in=decisions).values_list("decision_id", flat=True)
        )
    erased_now = AuditEntry.objects.filter(pk__in=[pk for pk, _, _ in found]).update(
        user_id=None, subject_id=None, context=None, subgroups=None, salt=None, erased=True
    )
    ChainHead.objects.filter(customer=customer).update(erased=F("erased") + erased_now)
    _decisions_erase(customer, erasure.target, value, decisions, pseudonym)
    if erasure.target == Erasure.Target.USER_ID:
        events_rekey_user(customer=customer, user_id=value or "", pseudonym=pseudonym or "")
    if span["first"] is not None:
        erased = registry.Erased(
            customer.pk,
            value if pseudonym else None,
            pseudonym,
            span["first"],
            span["last"],
            subject_decisions,
        )
        for eraser in registry.erasers():
            eraser(erased)
    erasure.entries = len(found)
    erasure.sequences = ranges(sequences)
    erasure.pseudonym = pseudonym
    erasure.pending_value = None
    erasure.status = Erasure.Status.COMPLETED
    erasure.completed_at = now
    erasure.save()
    erasure.entry_sequence = _append(erasure, now)
    Erasure.objects.filter(pk=erasure.pk).update(entry_sequence=erasure.entry_sequence)
    data = {
        "erasure_id": erasure.pk,
        "entries": erasure.entries,
        "sequences": erasure.sequences,
        "legal_basis": erasure.legal_basis,
        "entry_sequence": erasure.entry_sequence,
    }
    event_emit(customer=customer, type="erasure.completed", data=data)


def _decisions_erase(
    customer: Customer, target: str, value: str | None, decisions: list[int], pseudonym: str | None
) -> None:
    """The decision rows (current state) lose the erased person's fields: an erased subject's
    subject_id, context and subgroups; an erased reviewer's user_id becomes the pseudonym (their
    figures keep their values) and the context goes. Their replay fingerprints go too (they
    were computed over the personal fields)."""
    rows = Decision.objects.filter(customer=customer, pk__in=decisions)
    if target == Erasure.Target.USER_ID:
        Decision.objects.filter(customer=customer, user_id=value).update(
            user_id=pseudonym, context="", payload_fingerprint=ERASED_FINGERPRINT
        )
    else:
        rows.update(subject_id=None, context="", subgroups={}, payload_fingerprint=ERASED_FINGERPRINT)


def _append(erasure: Erasure, now: dt.datetime) -> int:
    """The `erasure` entry: its id, the affected sequences as ranges, the count and the basis."""
    entry = AuditEntry(
        customer_id=erasure.customer_id,
        decision=None,
        type=AuditEntry.Type.ERASURE,
        decision_ref=erasure.pk,
        timestamp=now,
        logged_at=now,
        user_id=None,
        ai_recommendation="",
        user_decision="",
        followed_ai=False,
        calibration_category="",
        context=None,
        subgroups=None,
    )
    entry_seal(
        entry,
        clear={
            "entry_id": entry.id,
            "type": "erasure",
            "erasure_id": erasure.pk,
            "logged_at": isoformat(now),
            "legal_basis": erasure.legal_basis,
            "entries": erasure.entries,
            "sequences": erasure.sequences,
        },
    )
    entries_append(erasure.customer_id, [entry], decisions=0)
    return entry.sequence


def erasures_run_due(*, now: dt.datetime | None = None) -> int:
    """Beat: scheduled erasures whose entries reached the minimum retention run now; and each
    customer's daily retention run erases the personal part of entries older than max_days
    (one `erasure` entry per run, basis retention_expired)."""
    now = now or timezone.now()
    done = 0
    for erasure in Erasure.objects.filter(
        status=Erasure.Status.SCHEDULED, execute_after__lte=now
    ).select_related("customer")[:100]:
        with transaction.atomic():
            if RetentionPolicy.objects.filter(customer=erasure.customer, legal_hold=True).exists():
                continue
            _execute(erasure, erasure.pending_value)
            done += 1
    for policy in RetentionPolicy.objects.filter(max_days__isnull=False, legal_hold=False).select_related(
        "customer"
    ):
        cutoff = now - dt.timedelta(days=policy.max_days or 0)
        old = AuditEntry.objects.filter(
            customer=policy.customer, type__in=_PERSONAL_TYPES, erased=False, format=2, logged_at__lt=cutoff
        )
        if not old.exists():
            continue
        with transaction.atomic():
            erasure = Erasure(
                customer=policy.customer,
                target=Erasure.Target.RETENTION,
                reason=f"Retention policy: personal data older than {policy.max_days} days",
                legal_basis="retention_expired",
                status=Erasure.Status.COMPLETED,
                execute_after=now,
                requested_by="retention policy",
            )
            _execute(erasure, None, older_than=cutoff)
            done += 1
    return done


def erasure_get(*, customer: Customer, erasure_id: str) -> Erasure:
    erasure = Erasure.objects.filter(customer=customer, pk=erasure_id).first()
    if erasure is None:
        raise ErasureNotFound("No erasure of this customer has that id.")
    return erasure


def erasures_list(*, customer: Customer) -> QuerySet[Erasure]:
    return Erasure.objects.filter(customer=customer).order_by("-created_at", "-pk")


def erasures_in(*, customer: Customer, since: dt.datetime, until: dt.datetime) -> QuerySet[Erasure]:
    """The completed erasures of a period (reports list them: count and basis)."""
    return Erasure.objects.filter(
        Q(customer=customer), status=Erasure.Status.COMPLETED, completed_at__gte=since, completed_at__lt=until
    )
