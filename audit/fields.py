"""A decision's fields, derived from their one declaration (audit.inputs.DecisionInput).
Everything in audit that names them (the record and its fingerprint, the chain append, the
responses, verification) takes them from here; the output serializers are checked against
these lists when they are imported."""

from audit.inputs import (  # the sizes are declared with the decision's fields
    CONTEXT_MAX,
    CUSTOM_KEY_MAX,
    CUSTOM_KEYS_MAX,
    DECISION_ID_HELP,
    DECISION_ID_PATTERN,
    ID_MAX,
    METADATA_MAX_BYTES,
    MODEL_ID_MAX,
    MODEL_VERSION_MAX,
    PROBE_KINDS,
    REVIEW_SECONDS_MAX,
    SUBGROUP_VALUE_MAX,
    SUBJECT_ID_MAX,
    USER_ID_MAX,
    VALUE_MAX,
    DecisionInput,
    Entry,
)

__all__ = [
    "CONTEXT_MAX",
    "CUSTOM_KEYS_MAX",
    "CUSTOM_KEY_MAX",
    "DECISION_ID_HELP",
    "DECISION_ID_PATTERN",
    "ID_MAX",
    "METADATA_MAX_BYTES",
    "MODEL_ID_MAX",
    "MODEL_VERSION_MAX",
    "PROBE_KINDS",
    "REVIEW_SECONDS_MAX",
    "SUBGROUP_VALUE_MAX",
    "SUBJECT_ID_MAX",
    "USER_ID_MAX",
    "VALUE_MAX",
]


def _entries() -> dict[str, str]:
    """Each stored decision field (DecisionInput's fields with an `Entry` mark) -> how the
    entries show it."""
    out: dict[str, str] = {}
    for name, info in DecisionInput.model_fields.items():
        marks = [m for m in info.metadata if isinstance(m, Entry)]
        if marks:
            out[name] = marks[0].shown
    return out


DECISION_ENTRY = _entries()

# Fields counted in the replay fingerprint only when sent.
FINGERPRINT_WHEN_SENT = ("subject_id", "review_started_at", "review_seconds", "probe")

# What a client sends for a decision, apart from its timestamp; the fingerprint covers
# exactly these (the timestamp only when the client sent one).
DECISION_FIELDS = [name for name in DECISION_ENTRY if name != "timestamp"]

# Decision fields an entry shows only when the decision has a value (see audit.inputs.Entry).
ENTRY_OPTIONAL_FIELDS = [name for name, shown in DECISION_ENTRY.items() if shown == "when_set"]

# Decision fields every entry appended since they were hashed shows (null when the decision has
# none); older entries hold no key for them (see audit.inputs.Entry, "new_entries").
ENTRY_NEW_FIELDS = [name for name, shown in DECISION_ENTRY.items() if shown == "new_entries"]

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

# Every key an entry's document can hold: the ones always shown, then those shown when set, then
# those only entries appended since they were hashed show.
ENTRY_DOCUMENT_FIELDS = [*ENTRY_FIELDS, *ENTRY_OPTIONAL_FIELDS, *ENTRY_NEW_FIELDS]

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

assert {name for name, shown in DECISION_ENTRY.items() if shown == "always"} <= set(ENTRY_FIELDS)
