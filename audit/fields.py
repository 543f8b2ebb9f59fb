"""A decision's fields, written once. Everything in audit that names them (the record and its
fingerprint, the chain append, the responses, verification) takes them from here; the output
serializers are checked against these lists when they are imported."""

from dataclasses import dataclass

# Field sizes: the model's columns and the validator use the same numbers, so bad input is a
# 400 and never a database error.
ID_MAX = 128
USER_ID_MAX = 256
MODEL_ID_MAX = 256
MODEL_VERSION_MAX = 128
VALUE_MAX = 1000
CONTEXT_MAX = 10_000
METADATA_MAX_BYTES = 16 * 1024
REVIEW_SECONDS_MAX = 86_400


@dataclass(frozen=True)
class DecisionField:
    """One field a client sends for a decision (POST /log, POST /calibrate, POST /log/batch,
    import_decisions). This declaration is the whole of a new field for the decision
    pipeline: the validator (audit.inputs) parses it by `kind`, the record (audit.records)
    stores it under `name` and counts it in the replay fingerprint, and `entry` says whether
    the audit entries show (and hash) it: "always", "when_set" (the entry holds the key only
    when the decision has a value, so the entries and hashes of decisions without it are
    unchanged) or "never". A column of that name on Decision (and on AuditEntry when the
    entry shows it) is the model's side.

    kinds: "id" (the decision_id alphabet), "text", "confidence", "subgroups", "metadata",
    "timestamp", "seconds" (review time, 0..REVIEW_SECONDS_MAX), "probe" (an object, checked
    with the other fields by audit.inputs.oversight_checked); `alias` names a second key accepted for the same value."""

    name: str
    kind: str = "text"
    required: bool = False
    max_length: int = 0
    allow_blank: bool = False
    entry: str = "never"
    alias: str | None = None


DECISION_INPUTS: tuple[DecisionField, ...] = (
    DecisionField("decision_id", "id", max_length=ID_MAX),
    DecisionField("user_id", required=True, max_length=USER_ID_MAX, entry="always"),
    DecisionField("model_id", max_length=MODEL_ID_MAX, entry="always"),
    DecisionField("model_version", max_length=MODEL_VERSION_MAX, entry="always"),
    DecisionField("ai_recommendation", required=True, max_length=VALUE_MAX, entry="always"),
    DecisionField("ai_confidence", "confidence", entry="always", alias="confidence"),
    DecisionField("user_decision", required=True, max_length=VALUE_MAX, entry="always"),
    DecisionField("initial_decision", max_length=VALUE_MAX),
    DecisionField("outcome", max_length=VALUE_MAX, entry="always"),
    DecisionField("context", max_length=CONTEXT_MAX, allow_blank=True, entry="always"),
    DecisionField("subgroups", "subgroups", entry="always"),
    DecisionField("metadata", "metadata"),
    DecisionField("timestamp", "timestamp", entry="always"),
    # Review effort and vigilance probes (docs/reference/oversight.md): optional, in the replay
    # fingerprint only when sent (so older decisions keep theirs), checked together by
    # audit.inputs.oversight_checked.
    DecisionField("review_started_at", "timestamp"),
    DecisionField("review_seconds", "seconds", entry="when_set"),
    DecisionField("probe", "probe", entry="when_set"),
)

# Fields counted in the replay fingerprint only when sent.
FINGERPRINT_WHEN_SENT = ("review_started_at", "review_seconds", "probe")

# What a client sends for a decision, apart from its timestamp; the fingerprint covers
# exactly these (the timestamp only when the client sent one).
DECISION_FIELDS = [field.name for field in DECISION_INPUTS if field.name != "timestamp"]

# Decision fields an entry shows only when the decision has a value (see DecisionField).
ENTRY_OPTIONAL_FIELDS = [field.name for field in DECISION_INPUTS if field.entry == "when_set"]

# What the service derives when it logs a decision (docs/reference/calibration.md).
DERIVED_FIELDS = ["followed_ai", "calibration_category"]

# An entry of GET /audit-trail: the document that is hashed, in the order shown.
ENTRY_FIELDS = [
    "entry_id",
    "sequence",
    "type",
    "decision_id",
    "timestamp",
    "logged_at",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "followed_ai",
    "calibration_category",
    "outcome",
    "context",
    "subgroups",
    "hash",
    "previous_hash",
]

# Every key an entry's document can hold: the ones always shown, then those shown when set.
ENTRY_DOCUMENT_FIELDS = [*ENTRY_FIELDS, *ENTRY_OPTIONAL_FIELDS]

# The entry's own fields: its identity, its place in the chain and when it was appended.
_ENTRY_OWN = {"entry_id", "sequence", "type", "decision_id", "logged_at", "hash", "previous_hash"}

# The decision fields an entry copies when it is appended: a snapshot of the decision then.
SNAPSHOT_FIELDS = [name for name in ENTRY_DOCUMENT_FIELDS if name not in _ENTRY_OWN]

# Snapshot fields that never change after logging: verification compares the decision row with
# its `decision` entry on these, so editing the row itself is caught too. (A late outcome moves
# the outcome and the category; the timestamp and decision_id are compared on their own.)
IMMUTABLE_FIELDS = [
    name for name in SNAPSHOT_FIELDS if name in DECISION_FIELDS and name not in ("outcome", "subgroups")
]

# The body of POST /log's 201/200 for a decision: the decision, then its entry's link.
DECISION_OUTPUT_FIELDS = [
    *DECISION_FIELDS,
    "timestamp",
    "logged_at",
    *DERIVED_FIELDS,
    "entry_id",
    "sequence",
    "hash",
    "previous_hash",
]

# A compliance report's decision log (its CSV columns, in their order).
DECISION_LOG_COLUMNS = [
    "decision_id",
    "timestamp",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "initial_decision",
    "followed_ai",
    "calibration_category",
    "outcome",
    "context",
]

assert {f.name for f in DECISION_INPUTS if f.entry == "always"} <= set(ENTRY_FIELDS)
