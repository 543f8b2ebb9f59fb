"""Erasures and the retention policy (docs/reference/erasure.md): the personal part of
format-2 entries is deleted (salt and personal fields), whatever else names an erased person is
cleared or re-keyed to a pseudonym, stored exports that may hold them are deleted, and an
`erasure` entry is appended (audit.erasure_run). No entry hash, tree node or checkpoint
changes."""

import datetime as dt
import hashlib
import hmac
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q, QuerySet
from django.utils import timezone

from audit import erasure_run
from audit.erasure_secret import erasure_secret
from audit.erasure_storage import erasure_storage_clean
from audit.exceptions import ErasureLegalHold, ErasureNotFound
from audit.models_erasure import LEGAL_BASIS_NAMES, Erasure, RetentionPolicy
from audit.retention import retention_policy_get
from keys.models import Customer

LEGAL_BASES = tuple(LEGAL_BASIS_NAMES)


@dataclass(frozen=True)
class ErasureResult:
    erasure: Erasure
    created: bool  # False: the same request again (or while it runs), which erased nothing more


def _digest(customer_id: str, target: str, value: str) -> str:
    """Keyed by a secret of the installation (audit.erasure_secret), so the digest of a
    low-entropy id cannot be reversed by trying every value."""
    message = f"{customer_id}\x00{target}\x00{value}".encode()
    return hmac.new(erasure_secret(), message, hashlib.sha256).hexdigest()


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
    """POST /erasures: erase now, on a worker when it reaches more than ERASURE_INLINE_ENTRIES
    entries (`running`), or schedule until the entries reach the policy's minimum retention;
    refused (and recorded) under legal hold. Erasures of one person run one after the other:
    the same request again while one runs, or when nothing more matches, answers the earlier
    erasure (created=False), after running a reviewer's clean-up again."""
    if not value.strip():
        # An empty value would match every entry logged without that field (a subject_id left
        # blank): a caller's bug, never a person. The API and the console refuse it earlier.
        raise ValueError("an erasure names one person: the value must not be empty")
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
        erasure_run.target_lock(customer.pk, digest)
        earlier = (
            Erasure.objects.filter(customer=customer, target_digest=digest)
            .exclude(status=Erasure.Status.REFUSED)
            .order_by("-created_at")
            .first()
        )
        if earlier is not None and earlier.status == Erasure.Status.RUNNING:
            return ErasureResult(earlier, created=False)
        matching = erasure_run.matching(customer, target, value)
        span = matching.aggregate(youngest=Max("logged_at"))
        if span["youngest"] is None and earlier is not None:
            if earlier.status == Erasure.Status.COMPLETED:
                _clean_up_again(earlier, value)
            return ErasureResult(earlier, created=False)
        due = span["youngest"] + dt.timedelta(days=policy.min_days) if span["youngest"] else now
        count = matching.count()
        if due > now and not override_minimum:
            erasure = Erasure.objects.create(
                status=Erasure.Status.SCHEDULED,
                pending_value=value,
                execute_after=due,
                entries=count,
                **common,
            )
            return ErasureResult(erasure, created=True)
        pseudonym = erasure_run.new_pseudonym() if target == Erasure.Target.USER_ID else None
        if count > settings.ERASURE_INLINE_ENTRIES:
            erasure = Erasure.objects.create(
                status=Erasure.Status.RUNNING,
                pending_value=value,
                execute_after=now,
                entries=count,
                pseudonym=pseudonym,
                **common,
            )
            transaction.on_commit(lambda: erasure_continue_send(erasure.pk))
            return ErasureResult(erasure, created=True)
        erasure = Erasure.objects.create(
            status=Erasure.Status.COMPLETED, execute_after=now, pseudonym=pseudonym, **common
        )
        part = erasure_run.erase_part(erasure, value)
        _complete(erasure, part, now=now)
    erasure_storage_clean()
    return ErasureResult(erasure, created=True)


def _clean_up_again(earlier: Erasure, value: str) -> None:
    """The same reviewer erased again: whatever still names them (rows written since, or left by
    an erasure that ran before this rule) is re-keyed to the earlier erasure's pseudonym."""
    if earlier.target != Erasure.Target.USER_ID or not earlier.pseudonym:
        return
    part = erasure_run.erase_part(earlier, value)
    if part.named_someone:
        earlier.entries += len(part.sequences)
        earlier.sequences = erasure_run.ranges_merge(earlier.sequences, part.sequences)
        earlier.save(update_fields=["entries", "sequences", "entry_sequence"])


def _complete(erasure: Erasure, part: erasure_run.Part, *, now: dt.datetime) -> None:
    """An erasure whose last part ran: completed, its value dropped, its event fired (unless it
    named nobody), and the scheduled requests for the same person it made pointless completed."""
    erasure.entries = erasure.entries_done = erasure.entries_done + len(part.sequences)
    erasure.sequences = erasure_run.ranges_merge(erasure.sequences, part.sequences)
    erasure.pending_value = None
    erasure.status = Erasure.Status.COMPLETED
    erasure.completed_at = now
    erasure.save()
    if erasure.entry_sequence is not None:
        erasure_run.completed_event(erasure)
    if erasure.target_digest:
        _covered_complete(erasure, now)


def _covered_complete(erasure: Erasure, now: dt.datetime) -> None:
    """Scheduled requests for the same person whose entries this erasure has erased (none
    matches any more): completed, naming this erasure in `covered_by`, their value dropped."""
    for scheduled in Erasure.objects.filter(
        customer_id=erasure.customer_id, target_digest=erasure.target_digest, status=Erasure.Status.SCHEDULED
    ).exclude(pk=erasure.pk):
        value = scheduled.pending_value
        if value is not None and erasure_run.matching(erasure.customer, scheduled.target, value).exists():
            continue  # entries logged since this erasure: the request still has work when due
        scheduled.status = Erasure.Status.COMPLETED
        scheduled.covered_by = erasure.pk
        scheduled.pending_value = None
        scheduled.entries = 0
        scheduled.completed_at = now
        scheduled.save(update_fields=["status", "covered_by", "pending_value", "entries", "completed_at"])


def erasure_continue_send(erasure_id: str) -> None:
    from audit.tasks import erasure_continue

    erasure_continue.delay(erasure_id)


def erasure_continue(*, erasure_id: str) -> bool:
    """A worker's share of a running erasure: parts of ERASURE_PART_ENTRIES entries, each in
    its own transaction with its own `erasure` entry (an export taken meanwhile names the
    erasure of every erased entry), until none is left; then the erasure completes. True when
    it completed (or was no longer running)."""
    while True:
        with transaction.atomic():
            found = Erasure.objects.filter(pk=erasure_id, status=Erasure.Status.RUNNING).first()
            if found is None:
                return True
            erasure_run.target_lock(found.customer_id, found.target_digest)
            # Only the erasure row: a join locked FOR UPDATE would lock the customer row too, which
            # every write's deferred foreign-key checks share-lock at commit (a deadlock).
            erasure = (
                Erasure.objects.select_for_update(of=("self",)).select_related("customer").get(pk=erasure_id)
            )
            if erasure.status != Erasure.Status.RUNNING:
                return True
            limit = settings.ERASURE_PART_ENTRIES
            part = erasure_run.erase_part(erasure, erasure.pending_value, limit=limit)
            done = len(part.sequences) < limit
            if done:
                _complete(erasure, part, now=timezone.now())
            else:
                erasure.entries_done += len(part.sequences)
                erasure.sequences = erasure_run.ranges_merge(erasure.sequences, part.sequences)
                erasure.save(update_fields=["entries_done", "sequences", "entry_sequence"])
        if done:
            erasure_storage_clean()
            return True


def erasures_running_resume() -> int:
    """Beat: running erasures whose worker died or whose message was lost go on."""
    resumed = 0
    for erasure_id in Erasure.objects.filter(status=Erasure.Status.RUNNING).values_list("pk", flat=True)[
        :100
    ]:
        erasure_continue(erasure_id=erasure_id)
        resumed += 1
    return resumed


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
            erasure_run.target_lock(erasure.customer_id, erasure.target_digest)
            erasure.refresh_from_db()
            if erasure.status != Erasure.Status.SCHEDULED:
                continue  # a later erasure of the same person covered it meanwhile
            if erasure.target == Erasure.Target.USER_ID and not erasure.pseudonym:
                erasure.pseudonym = erasure_run.new_pseudonym()
            erasure.entries = 0
            part = erasure_run.erase_part(erasure, erasure.pending_value)
            _complete(erasure, part, now=now)
            done += 1
    for policy in RetentionPolicy.objects.filter(max_days__isnull=False, legal_hold=False).select_related(
        "customer"
    ):
        cutoff = now - dt.timedelta(days=policy.max_days or 0)
        if not erasure_run.matching(policy.customer, Erasure.Target.RETENTION, None, cutoff).exists():
            continue
        with transaction.atomic():
            erasure = Erasure.objects.create(
                customer=policy.customer,
                target=Erasure.Target.RETENTION,
                reason=f"Retention policy: personal data older than {policy.max_days} days",
                legal_basis="retention_expired",
                status=Erasure.Status.COMPLETED,
                execute_after=now,
                requested_by="retention policy",
            )
            part = erasure_run.erase_part(erasure, None, older_than=cutoff)
            _complete(erasure, part, now=now)
            done += 1
    if done:
        erasure_storage_clean()
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
