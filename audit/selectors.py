"""Reads for the audit trail: the filtered list and the streaming chain verification."""

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.db import connection
from django.db.models import Case, CharField, F, Func, Q, QuerySet, TextField, Value, When
from django.db.models.expressions import Combinable
from django.db.models.functions import Cast

from audit.chain import ENTRY_COLUMNS, clear_fields_from_values, document_from_values
from audit.erasure_listing import erasures_of_period as erasures_of_period  # reports list them
from audit.fields import DECISION_LOG_COLUMNS as DECISION_LOG_COLUMNS  # the reports' csv columns
from audit.fields import ENTRY_NEW_FIELDS, IMMUTABLE_FIELDS
from audit.hashing import PERSONAL_FIELDS, entry_hash_matches, format2_problem, same_value
from audit.models import GENESIS_HASH, AuditEntry, ChainHead, Decision
from audit.models_erasure import ERASED, ERASED_FINGERPRINT, PSEUDONYM_PREFIX
from audit.models_erasure import LEGAL_BASIS_NAMES as LEGAL_BASIS_NAMES  # reports print them
from audit.oversight import (  # the oversight figures' grouped reads, re-exported
    ModelReviewTimes as ModelReviewTimes,
)
from audit.oversight import Narrow as Narrow
from audit.oversight import ProbeCounts as ProbeCounts
from audit.oversight import UserReviewCounts as UserReviewCounts
from audit.oversight import probe_counts_by_user as probe_counts_by_user
from audit.oversight import review_counts_by_user as review_counts_by_user
from audit.oversight import review_times_by_model as review_times_by_model
from config import csvcells
from config.jsondoc import JSONObject, JSONValue
from config.querysets import narrowed
from config.sqlparams import SQLValue
from config.timeutils import isoformat
from keys.models import Customer

VERIFY_CHUNK = 2000


def audit_trail_size(customer: Customer) -> int:
    """How many entries the customer's trail holds: the chain head's sequence, since the
    trail is append-only and gapless (an O(1) read instead of COUNT(*) over millions)."""
    return ChainHead.objects.filter(customer=customer).values_list("sequence", flat=True).first() or 0


def sequences_appended(customer: Customer, *, since: dt.datetime, until: dt.datetime) -> tuple[int, int]:
    """[first, after): the sequences of the customer's entries appended in [since, until), entries
    being appended in sequence order (a report's drift points are those of its period)."""
    entries = (
        AuditEntry.objects.filter(customer=customer).order_by("sequence").values_list("sequence", flat=True)
    )
    after = entries.filter(logged_at__gte=until).first() or audit_trail_size(customer) + 1
    first = entries.filter(logged_at__gte=since, sequence__lt=after).first() or after
    return first, after


def entry_logged_at(customer: Customer, sequence: int) -> str | None:
    """When the entry of `sequence` was appended (ISO 8601 UTC with milliseconds), or None."""
    logged = AuditEntry.objects.filter(customer=customer, sequence=sequence).values_list(
        "logged_at", flat=True
    )
    return isoformat(logged.first())


def decision_get(customer: Customer, decision_id: str) -> Decision | None:
    """One stored decision of the customer, or None."""
    return Decision.objects.filter(customer=customer, decision_id=decision_id).first()


def reviewer_decisions(
    customer: Customer, *, user_id: str, since: dt.datetime, until: dt.datetime
) -> QuerySet[Decision]:
    """Every decision one reviewer made in [since, until), vigilance probes included (their
    `probe_kind` tells them), newest first: the console's page of a reviewer."""
    rows = Decision.objects.filter(
        customer=customer, user_id=user_id, timestamp__gte=since, timestamp__lt=until
    )
    return rows.order_by("-timestamp", "-id")


def audit_trail_list(rows: QuerySet[AuditEntry]) -> QuerySet[AuditEntry]:
    """The entries of a tenant-filtered (and list-filtered) queryset, newest first."""
    return rows.order_by("-sequence")


@dataclass(frozen=True)
class Verification:
    valid: bool
    entries_checked: int
    head_hash: str
    first_invalid_sequence: int | None
    # Signed checkpoints checked against the chain (docs/reference/checkpoints.md).
    checkpoints_checked: int = 0
    first_invalid_checkpoint: int | None = None
    # Entries whose personal part was erased (docs/reference/erasure.md), from the chain head.
    erased_entries: int = 0

    # the verification's document by name, rendered as JSON
    def as_dict(self) -> JSONObject:
        return {
            "valid": self.valid,
            "entries_checked": self.entries_checked,
            "head_hash": self.head_hash,
            "first_invalid_sequence": self.first_invalid_sequence,
            "checkpoints_checked": self.checkpoints_checked,
            "first_invalid_checkpoint": self.first_invalid_checkpoint,
            "erased_entries": self.erased_entries,
        }


def chain_verify(
    customer: Customer,
    *,
    chunk_size: int = VERIFY_CHUNK,
    after_sequence: int = 0,
    after_hash: str = GENESIS_HASH,
    on_entry: Callable[[int, str], None] | None = None,
) -> Verification:
    """Recompute every hash in sequence order, streaming (constant memory): an entry is
    invalid when its sequence is not the next one, its previous_hash is not the hash of
    the entry before, its stored hash does not match its content, or its decision row no
    longer matches what the entry recorded. The head row must point at the last entry.

    The head is read first and the entries are read up to it: an append commits its entries
    and the head together, so every entry up to the head read is there, and appends that
    commit during the read are left to the next check instead of making this one disagree
    with a head that moved on. An entry beyond the head is invalid all the same: after the
    read, the last entry's sequence is read before the head again, so an entry committed by
    then has its head committed too.

    `after_sequence`/`after_hash`: start after a verified point (audit/verify.py);
    `entries_checked` then counts only the entries read here. `on_entry(sequence, hash)` sees
    every entry read, in order, with its stored hash (the signed checkpoints' check walks the
    same read: audit.checkpoints.CheckpointWalk)."""
    columns = [
        *ENTRY_COLUMNS,
        *(f"decision__{name}" for name in IMMUTABLE_FIELDS),
        "decision__decision_id",
        "decision__timestamp",
    ]
    head = ChainHead.objects.filter(customer=customer).values_list("sequence", "head_hash", "erased").first()
    head_sequence, head_hash, erased = head if head is not None else (0, GENESIS_HASH, 0)
    rows = (
        AuditEntry.objects.filter(customer=customer, sequence__gt=after_sequence, sequence__lte=head_sequence)
        .order_by("sequence")
        .values_list(*columns)
        .iterator(chunk_size=chunk_size)
    )
    width = len(ENTRY_COLUMNS)
    expected_sequence = after_sequence + 1
    previous_hash = after_hash
    first_invalid: int | None = None
    checked = 0
    for row in rows:
        doc, intact = _entry_checked(row[:width])
        sequence = doc.get("sequence")
        ok = (
            intact
            and sequence == expected_sequence
            and doc["previous_hash"] == previous_hash
            and _decision_matches(doc, row[width:])
        )
        if not isinstance(sequence, int):
            sequence = expected_sequence
        if not ok and first_invalid is None:
            first_invalid = min(sequence, expected_sequence)
        if on_entry is not None:
            on_entry(sequence, doc["hash"])
        checked += 1
        expected_sequence = sequence + 1
        previous_hash = doc["hash"]
    reached = after_sequence + checked
    if first_invalid is None and (head_sequence != reached or head_hash != previous_hash):
        first_invalid = min(head_sequence, reached) + 1
    if first_invalid is None:
        first_invalid = _beyond_head(customer)
    return Verification(
        valid=first_invalid is None,
        entries_checked=checked,
        head_hash=previous_hash,
        first_invalid_sequence=first_invalid,
        erased_entries=erased,
    )


# an entry's fields by name: JSON values of several types
def _entry_checked(values: tuple[JSONValue, ...]) -> tuple[JSONObject, bool]:
    """An entry's document and whether its content matches its hash: format 1 by its columns
    (audit.hashing.entry_hash_matches), format 2 by its stored canonical text and the
    commitment to its personal fields, which an erased entry no longer has
    (audit.hashing.format2_problem)."""
    try:
        doc = document_from_values(values)
    except ValueError:  # a canonical text that is not JSON
        return {"previous_hash": None, "hash": values[ENTRY_COLUMNS.index("hash")]}, False
    if doc.get("format") == 2:
        return doc, format2_problem(doc) in (None, "erased") and _columns_match(doc, values)
    return doc, entry_hash_matches(doc)


_SNAPSHOTS = frozenset({"decision", "outcome", "subgroups_attached"})


# an entry's fields by name: JSON values of several types
def _columns_match(doc: JSONObject, values: tuple[JSONValue, ...]) -> bool:
    """A decision's or outcome's format-2 entry: the columns the lists filter on and the reports
    read hold what its canonical text says (an edited column is caught like an edited entry)."""
    if "personal" not in doc or doc.get("type") not in _SNAPSHOTS:
        return True  # not a decision's snapshot (an erasure or a drift entry)
    columns = clear_fields_from_values(values)
    return all(same_value(doc.get(name), value) for name, value in columns.items())


def _beyond_head(customer: Customer) -> int | None:
    """The sequence after the head when an entry lies beyond it (the head moved back), else None."""
    last = (
        AuditEntry.objects.filter(customer=customer).order_by("-sequence").values_list("sequence", flat=True)
    )
    last_sequence = last.first() or 0
    head_sequence = (
        ChainHead.objects.filter(customer=customer).values_list("sequence", flat=True).first() or 0
    )
    return head_sequence + 1 if last_sequence > head_sequence else None


_NEW_FIELDS = frozenset(ENTRY_NEW_FIELDS)


# an entry's fields by name: JSON values of several types
def _decision_matches(doc: JSONObject, decision_values: tuple[JSONValue, ...]) -> bool:
    if doc.get("type") != AuditEntry.Type.DECISION:
        return True
    *immutable, decision_id, timestamp = decision_values
    if decision_id != doc["decision_id"]:
        return False
    if isoformat(timestamp) != doc["timestamp"]:
        return False
    # doc.get: a field shown only when set is absent from the document when the row holds None.
    # An erased entry no longer holds the personal fields, so only the others are compared.
    # A field of ENTRY_NEW_FIELDS is compared when the entry holds its key: an entry appended
    # before it was hashed does not (docs/reference/decisions.md, "What the hash covers").
    erased = doc.get("erased") is True
    return all(
        value == doc.get(name)
        for name, value in zip(IMMUTABLE_FIELDS, immutable, strict=True)
        if not (erased and name in PERSONAL_FIELDS) and (name not in _NEW_FIELDS or name in doc)
    )


# --- reports (compliance exports read decisions only through these) ---------------------------


def decision_set(
    customer: Customer,
    *,
    since: dt.datetime,
    until: dt.datetime,
    user_ids: list[str] | None = None,
    model_ids: list[str] | None = None,
    categories: list[str] | None = None,
) -> QuerySet[Decision]:
    """The customer's real decisions made in [since, until), narrowed by the report filters
    (an empty or None list does not narrow), in the order they were made. Vigilance probes
    are left out: they test the reviewer and describe no real decision (their figures are
    oversight_vigilance's)."""
    qs = narrowed(
        Decision.objects.filter(
            customer=customer, timestamp__gte=since, timestamp__lt=until, probe_kind__isnull=True
        ),
        user_id__in=user_ids,
        model_id__in=model_ids,
        calibration_category__in=categories,
    )
    return qs.order_by("timestamp", "decision_id")


# What decision_set(customer, since=, until=) narrowed to the decisions with a confidence and an
# outcome, newest first, as (confidence, recommendation, outcome) gives the ORM to compile, as
# text once: every POST /calibrate reads it, where building and compiling the query cost more of
# the web process's CPU than the statement costs the server (tests/calibration: the same text).
_SCORED_LATEST_SQL = (
    'SELECT "audit_decision"."ai_confidence" AS "ai_confidence", "audit_decision"."ai_recommendation" AS '
    '"ai_recommendation", "audit_decision"."outcome" AS "outcome" FROM "audit_decision" WHERE '
    '("audit_decision"."customer_id" = %s AND "audit_decision"."probe_kind" IS NULL AND '
    '"audit_decision"."timestamp" >= %s AND "audit_decision"."timestamp" < %s AND '
    '"audit_decision"."ai_confidence" IS NOT NULL AND "audit_decision"."outcome" IS NOT NULL) '
    'ORDER BY "audit_decision"."timestamp" DESC, "audit_decision"."decision_id" DESC LIMIT '
)


def scored_latest_sql(
    customer: Customer, *, since: dt.datetime, until: dt.datetime, limit: int
) -> tuple[str, list[SQLValue]]:
    """The SQL and parameters of the window's latest `limit` decisions with a confidence and an
    outcome, (ai_confidence, ai_recommendation, outcome) newest first (a backward scan of the
    partial index `audit_dec_conf_check`): the statement the ORM makes of that queryset."""
    adapt = connection.ops.adapt_datetimefield_value
    return _SCORED_LATEST_SQL + str(int(limit)), [customer.pk, adapt(since), adapt(until)]


def _log_erased(decisions: QuerySet[Decision], cell: Callable[[str], Combinable] = F) -> QuerySet[Decision]:
    """The decision log prints `erased` where a personal field was erased
    (docs/reference/erasure.md): the context of every erased decision, and the reviewer of an
    erased reviewer's decisions (whose pseudonym the per-reviewer figures keep). `cell` renders
    a column that was not erased."""
    erased = Q(payload_fingerprint=ERASED_FINGERPRINT)
    return decisions.annotate(
        log_user_id=Case(
            When(erased & Q(user_id__startswith=PSEUDONYM_PREFIX), then=Value(ERASED)),
            default=cell("user_id"),
            output_field=TextField(),
        ),
        log_context=Case(When(erased, then=Value(ERASED)), default=cell("context"), output_field=TextField()),
    )


_LOG_SOURCE = {"user_id": "log_user_id", "context": "log_context"}


def decision_log_rows(
    decisions: QuerySet[Decision], *, limit: int | None = None
) -> Iterator[dict[str, object]]:
    """The decision log as dicts of DECISION_LOG_COLUMNS (timestamps in the API's format),
    streamed in chunks (a server-side cursor on PostgreSQL): constant memory at any size."""
    qs = _log_erased(decisions).values_list(*(_LOG_SOURCE.get(c, c) for c in DECISION_LOG_COLUMNS))
    if limit is not None:
        qs = qs[:limit]
    ts = DECISION_LOG_COLUMNS.index("timestamp")
    for row in qs.iterator(chunk_size=2000):
        values = list(row)
        values[ts] = isoformat(values[ts])
        yield dict(zip(DECISION_LOG_COLUMNS, values, strict=True))


def decision_log_copy(decisions: QuerySet[Decision], write: Callable[[bytes], object]) -> bool:
    """On PostgreSQL, the decision log as CSV (header first, the compliance CSV's columns, the
    API's timestamp format, text cells made spreadsheet-safe by config.csvcells) straight from
    COPY ... TO STDOUT into `write`; False elsewhere (the caller writes decision_log_rows
    itself, through the same rule)."""
    if connection.vendor != "postgresql":
        return False

    def cell(name: str) -> Func:
        return Func(F(name), template=csvcells.SQL_TEMPLATE, output_field=TextField())

    columns: JSONObject = {
        name: F(_LOG_SOURCE[name])
        if name in _LOG_SOURCE
        else cell(name)
        if isinstance(Decision._meta.get_field(name), CharField | TextField)
        else F(name)
        for name in DECISION_LOG_COLUMNS
    }
    columns["timestamp"] = Func(
        F("timestamp"),
        template="to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
    )
    columns["followed_ai"] = Cast(F("followed_ai"), CharField())
    qs = (
        _log_erased(decisions, cell)
        .annotate(**{f"c_{name}": expr for name, expr in columns.items()})
        .values_list(*(f"c_{name}" for name in DECISION_LOG_COLUMNS))
    )
    sql, params = qs.query.sql_with_params()
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv)", params) as copy,
    ):
        write((",".join(DECISION_LOG_COLUMNS) + "\n").encode())
        for block in copy:
            write(bytes(block))
    return True


def point_entries(
    customer_id: str, *, user_id: str | None, model_id: str | None, model_version: str | None
) -> Iterator[AuditEntry]:
    """The customer's decision and outcome entries in chain order, narrowed to a reviewer, model
    and version when given (a drift monitor's `previous` baseline, docs/reference/drift.md)."""
    rows = AuditEntry.objects.filter(customer_id=customer_id, type__in=["decision", "outcome"])
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    if model_id is not None:
        rows = rows.filter(model_id=model_id)
    if model_version is not None:
        rows = rows.filter(model_version=model_version)
    fields = ["id", "type", "sequence", "decision_ref", "user_id", "model_id", "model_version", "timestamp",
              "ai_confidence", "followed_ai", "outcome", "ai_recommendation", "probe"]  # fmt: skip
    return rows.order_by("sequence").only(*fields).iterator(chunk_size=2000)
