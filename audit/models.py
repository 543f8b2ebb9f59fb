"""Decisions and the append-only, hash-chained audit trail (docs/reference/decisions.md).

Every entry is a self-contained snapshot of what GET /audit-trail shows, so the chain can
be recomputed from the entries alone (and from an export). Decisions hold the current
state (a late outcome updates them); the entries never change after they are written.
"""

from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone

from audit.entry_types import EntryType
from audit.fields import (  # the sizes are declared with the decision's fields
    ID_MAX,
    MODEL_ID_MAX,
    MODEL_VERSION_MAX,
    SUBJECT_ID_MAX,
    USER_ID_MAX,
    VALUE_MAX,
)
from config.ids import new_id
from keys.models import Customer

if TYPE_CHECKING:
    from audit.chain import Template

GENESIS_HASH = "0" * 64


class ProbeKind(models.TextChoices):
    """A vigilance probe: a case whose right answer is known, shown with an AI recommendation
    that is deliberately wrong (or deliberately right). See docs/reference/oversight.md."""

    KNOWN_WRONG = "known_wrong"
    KNOWN_RIGHT = "known_right"


class CalibrationCategory(models.TextChoices):
    """Per-record categories (docs/reference/calibration.md; INSUFFICIENT_DATA and NON_DISCRIMINATING
    exist only for users and organisations)."""

    CALIBRATED = "CALIBRATED"
    OVERTRUSTING = "OVERTRUSTING"
    UNDERTRUSTING = "UNDERTRUSTING"
    UNSCORED = "UNSCORED"


def _decision_id() -> str:
    return new_id("dec")


def _entry_id() -> str:
    return new_id("aud")


class Decision(models.Model):
    """One AI-mediated decision (POST /log, POST /calibrate). Current state: `outcome` and
    `calibration_category` change when a late outcome arrives (recorded as an entry)."""

    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="decisions")
    decision_id = models.CharField(max_length=ID_MAX, default=_decision_id)
    user_id = models.CharField(max_length=USER_ID_MAX)
    # The person the decision is about (docs/reference/erasure.md); erasure requests name it.
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX, null=True, blank=True)
    model_id = models.CharField(max_length=MODEL_ID_MAX, null=True, blank=True)
    model_version = models.CharField(max_length=MODEL_VERSION_MAX, null=True, blank=True)
    ai_recommendation = models.CharField(max_length=VALUE_MAX)
    ai_confidence = models.FloatField(null=True, blank=True)
    user_decision = models.CharField(max_length=VALUE_MAX)
    initial_decision = models.CharField(max_length=VALUE_MAX, null=True, blank=True)
    outcome = models.CharField(max_length=VALUE_MAX, null=True, blank=True)
    context = models.TextField(blank=True, default="")
    subgroups = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    timestamp = models.DateTimeField(help_text="When the decision was made (UTC).")
    logged_at = models.DateTimeField(default=timezone.now)
    followed_ai = models.BooleanField()
    calibration_category = models.CharField(max_length=16, choices=CalibrationCategory.choices)
    # SHA-256 of the normalised request that created the decision: a replay with the same
    # payload answers 200, a different payload 409. Not affected by late outcomes.
    payload_fingerprint = models.CharField(max_length=64, editable=False)
    # Review effort: when the reviewer opened the case and how long they spent on it
    # (given, or derived from the two timestamps). Null when the client did not say.
    review_started_at = models.DateTimeField(null=True, blank=True)
    review_seconds = models.FloatField(null=True, blank=True)
    # A vigilance probe as sent ({"kind", "correct_decision"}; null for a real decision). Its
    # outcome is its correct decision and never changes. `probe_kind` and `probe_corrected`
    # (the reviewer's decision equals the correct one) are derived from it for the indexes.
    probe = models.JSONField(null=True, blank=True)
    probe_kind = models.CharField(max_length=16, null=True, blank=True, choices=ProbeKind.choices)
    probe_corrected = models.BooleanField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "decision_id"], name="audit_decision_id_unique_per_customer"
            ),
        ]
        indexes = [
            # The oversight figures (audit/oversight.py) read a window's timed real decisions
            # through the first two partial indexes (all of them; those with a known outcome) and
            # its probes through the third: each holds every column its figures count, so they are
            # index-only scans on PostgreSQL. The fourth serves every time window and counts a
            # window's decisions per reviewer from the index alone.
            models.Index(
                fields=["customer", "timestamp", "model_id", "review_seconds", "user_id", "followed_ai"],
                name="audit_dec_timed_ts",
                condition=models.Q(review_seconds__isnull=False, probe_kind__isnull=True),
            ),
            models.Index(
                fields=[
                    "customer",
                    "timestamp",
                    "model_id",
                    "review_seconds",
                    "user_id",
                    "followed_ai",
                    "calibration_category",
                ],
                name="audit_dec_timed_known_ts",
                condition=models.Q(
                    review_seconds__isnull=False, probe_kind__isnull=True, outcome__isnull=False
                ),
            ),
            models.Index(
                fields=[
                    "customer",
                    "timestamp",
                    "user_id",
                    "model_id",
                    "probe_kind",
                    "followed_ai",
                    "probe_corrected",
                ],
                name="audit_dec_probe_ts",
                condition=models.Q(probe_kind__isnull=False),
            ),
            models.Index(
                fields=["customer", "timestamp", "user_id", "model_id"], name="audit_dec_cust_ts_user"
            ),
            # The confidence check (calibration/reporting.py) reads a window's latest 10,000 real
            # decisions with a confidence and an outcome: a backward scan of this partial index,
            # index-only on PostgreSQL (the columns it groups and filters are included).
            models.Index(
                fields=["customer", "timestamp", "decision_id"],
                include=["ai_confidence", "ai_recommendation", "outcome", "model_id"],
                name="audit_dec_conf_check",
                condition=models.Q(
                    ai_confidence__isnull=False, outcome__isnull=False, probe_kind__isnull=True
                ),
            ),
            models.Index(fields=["customer", "user_id", "timestamp"], name="audit_dec_cust_user_ts"),
            models.Index(fields=["customer", "model_id", "timestamp"], name="audit_dec_cust_model_ts"),
            models.Index(
                fields=["customer", "subject_id"],
                name="audit_dec_cust_subject",
                condition=models.Q(subject_id__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.decision_id} ({self.customer_id})"


class AuditEntry(models.Model):
    """One link of a customer's hash chain. Its hashed content is written once and never
    changes; an erasure deletes its personal fields and salt only (docs/reference/erasure.md).

    Format 1 (older entries): the hash covers the columns as GET /audit-trail shows them.
    Format 2: `canonical` holds the exact RFC 8785 text the hash covers (the fields that are
    not personal, and the salted commitment to those that are), read back as written by
    verify and the export; the personal fields and the salt are the columns beside it."""

    Type = EntryType  # audit/entry_types.py
    if TYPE_CHECKING:
        _template: Template  # an unsaved entry's canonical text around its links (audit.chain.entry_seal)

    id = models.CharField(primary_key=True, max_length=40, default=_entry_id, editable=False)
    # No database constraint (a batch's COMMIT checks 1,000 keys fewer, bench/README.md): entries are
    # written only under their chain head's lock, whose customer key is checked; customers are never
    # deleted, and Django's PROTECT still refuses it in Python.
    customer = models.ForeignKey(
        Customer, on_delete=models.PROTECT, related_name="audit_entries", db_constraint=False
    )
    # Null for an entry that records no decision (an erasure).
    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="entries", null=True)
    sequence = models.BigIntegerField()
    type = models.CharField(max_length=32, choices=Type.choices)
    # A snapshot of the decision as of this entry (what GET /audit-trail shows and hashes).
    decision_ref = models.CharField(max_length=ID_MAX, db_column="decision_ref")
    timestamp = models.DateTimeField()
    logged_at = models.DateTimeField()
    # Personal fields (null once erased).
    user_id = models.CharField(max_length=USER_ID_MAX, null=True)
    subject_id = models.CharField(max_length=SUBJECT_ID_MAX, null=True, blank=True)
    model_id = models.CharField(max_length=MODEL_ID_MAX, null=True, blank=True)
    model_version = models.CharField(max_length=MODEL_VERSION_MAX, null=True, blank=True)
    ai_recommendation = models.CharField(max_length=VALUE_MAX)
    ai_confidence = models.FloatField(null=True, blank=True)
    user_decision = models.CharField(max_length=VALUE_MAX)
    followed_ai = models.BooleanField()
    calibration_category = models.CharField(max_length=16, choices=CalibrationCategory.choices)
    outcome = models.CharField(max_length=VALUE_MAX, null=True, blank=True)
    context = models.TextField(blank=True, default="", null=True)
    subgroups = models.JSONField(default=dict, blank=True, null=True)
    # Shown (and hashed) only when the decision has them, so older entries keep their hashes.
    review_seconds = models.FloatField(null=True, blank=True)
    probe = models.JSONField(null=True, blank=True, help_text='{"kind", "correct_decision"}')
    # In the canonical text of every entry appended since it was hashed (null there when the
    # decision has none); null on older entries, whose hash does not cover it.
    initial_decision = models.CharField(max_length=VALUE_MAX, null=True, blank=True)
    hash = models.CharField(max_length=64)
    previous_hash = models.CharField(max_length=64)
    format = models.PositiveSmallIntegerField(default=1)
    canonical = models.TextField(null=True, blank=True)
    # The key of the personal commitment (32 random bytes); deleted by an erasure.
    salt = models.BinaryField(null=True, blank=True)
    erased = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "audit entries"
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "sequence"], name="audit_entry_sequence_unique_per_customer"
            ),
        ]
        indexes = [
            models.Index(fields=["customer", "user_id", "sequence"], name="audit_ent_cust_user_seq"),
            models.Index(fields=["customer", "model_id", "sequence"], name="audit_ent_cust_model_seq"),
            models.Index(fields=["customer", "decision_ref", "sequence"], name="audit_ent_cust_dec_seq"),
            models.Index(
                fields=["customer", "calibration_category", "sequence"], name="audit_ent_cust_cat_seq"
            ),
            models.Index(fields=["customer", "timestamp"], name="audit_ent_cust_ts"),
            models.Index(
                fields=["customer", "sequence"],
                name="audit_ent_probe_seq",
                condition=models.Q(probe__isnull=False),
            ),
            models.Index(
                fields=["customer", "sequence"], name="audit_ent_erased_seq", condition=models.Q(erased=True)
            ),
            models.Index(
                fields=["customer", "subject_id", "sequence"],
                name="audit_ent_cust_subject_seq",
                condition=models.Q(subject_id__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} #{self.sequence} ({self.customer_id})"


class ChainHead(models.Model):
    """The head of a customer's chain: the row every writer locks (SELECT ... FOR UPDATE on
    PostgreSQL) so sequences stay gapless and each entry links to the one before it.
    `decisions` counts decisions logged, so /metrics never counts millions of rows."""

    customer = models.OneToOneField(
        Customer, on_delete=models.PROTECT, primary_key=True, related_name="chain_head"
    )
    sequence = models.BigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    # The head before the last append: lets one UPDATE ... RETURNING hand back both hashes.
    previous_head_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    decisions = models.BigIntegerField(default=0)
    # Entries whose personal part was erased (GET /audit-trail/verify's erased_entries).
    erased = models.BigIntegerField(default=0)
    # What follows the chain after each write (the customer's enabled drift monitors), counted
    # by its owner under this row's lock (audit.services.chain_followers_set). Every write reads
    # it with the head it moves: at 0 it skips the contributors' `appended` step, and with it
    # the read of the monitors (audit.pipeline).
    followers = models.IntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.customer_id} @ {self.sequence}"


class ChainCheckpoint(models.Model):
    """The point a customer's chain was checked through (sequence and hash, the Merkle
    tree's right edge there, the signed checkpoints checked up to it): GET
    /audit-trail/verify rechecks only what was appended since, entries and signed
    checkpoints alike (audit/verify.py)."""

    customer = models.OneToOneField(
        Customer, on_delete=models.CASCADE, primary_key=True, related_name="chain_checkpoint"
    )
    sequence = models.BigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default=GENESIS_HASH)
    verified_at = models.DateTimeField(default=timezone.now)
    # The hashes of the complete subtrees [0, sequence) splits into (32 bytes each, left to
    # right; one per bit of sequence), recomputed from the entries' own hashes by the check:
    # the next check extends this tree instead of rereading the chain.
    tree_edge = models.BinaryField(default=b"")
    # How many signed checkpoints (at sizes up to sequence) the checks through here verified.
    checkpoints_checked = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.customer_id} verified @ {self.sequence}"


def _verify_job_id() -> str:
    return new_id("vfy")


class VerifyJob(models.Model):
    """A full recheck of a customer's chain (`?full=true`), run by a worker, one at a time."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        COMPLETED = "completed"
        FAILED = "failed"

    id = models.CharField(primary_key=True, max_length=40, default=_verify_job_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="verify_jobs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    completed_at = models.DateTimeField(null=True, blank=True)
    # The durable-work pattern of exports and webhook deliveries: a worker holds the job until
    # lease_until; a running job whose lease ran out (worker lost) or a queued one nobody took
    # (message lost) is sent again, at most VERIFY_MAX_ATTEMPTS runs.
    attempts = models.PositiveIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["customer", "status"], name="audit_vfy_cust_status")]

    def __str__(self) -> str:
        return f"{self.id} {self.status}"


class TreeNode(models.Model):
    """A complete subtree of a customer's Merkle tree (docs/reference/checkpoints.md, "The
    tree"): the hash of the 2**level leaves from index * 2**level. Written once, when the
    subtree becomes complete, so a root at any size or a proof is a handful of point reads."""

    pk = models.CompositePrimaryKey("customer_id", "level", "index")
    # No database constraint, as AuditEntry.customer (about 2,000 checks fewer a batch): nodes are
    # written only under the chain head's lock.
    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="+", db_constraint=False)
    level = models.PositiveSmallIntegerField()
    index = models.BigIntegerField()
    hash = models.BinaryField(max_length=32)

    def __str__(self) -> str:
        return f"{self.customer_id} node {self.level}/{self.index}"


def _signed_checkpoint_id() -> str:
    return new_id("chk")


class SignedCheckpoint(models.Model):
    """A signed note of a customer's tree at one size (docs/reference/checkpoints.md). Not the
    same thing as ChainCheckpoint, which only remembers where verification got to."""

    id = models.CharField(primary_key=True, max_length=40, default=_signed_checkpoint_id, editable=False)
    customer = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="signed_checkpoints")
    sequence = models.BigIntegerField(help_text="The tree size: the sequence of the last entry covered.")
    head_hash = models.CharField(max_length=64)
    root_hash = models.CharField(max_length=64)
    note = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["customer", "sequence"], name="audit_signed_checkpoint_size_unique"
            ),
        ]
        indexes = [models.Index(fields=["customer", "created_at"], name="audit_chk_cust_created")]

    def __str__(self) -> str:
        return f"{self.id} @ {self.sequence} ({self.customer_id})"


from audit.models_erasure import Erasure, RetentionPolicy  # noqa: E402  (registered with the app's models)

__all__ = [
    "GENESIS_HASH",
    "AuditEntry",
    "CalibrationCategory",
    "ChainCheckpoint",
    "ChainHead",
    "Decision",
    "Erasure",
    "ProbeKind",
    "RetentionPolicy",
    "SignedCheckpoint",
    "TreeNode",
    "VerifyJob",
]
