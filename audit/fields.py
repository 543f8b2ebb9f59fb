"""A decision's fields, written once. Everything in audit that names them (the record and its
fingerprint, the chain append, the responses, verification) takes them from here; the output
serializers are checked against these lists when they are imported."""

# What a client sends for a decision (POST /log, POST /calibrate, POST /log/batch,
# import_decisions), apart from its timestamp; the fingerprint covers exactly these.
DECISION_FIELDS = [
    "decision_id",
    "user_id",
    "model_id",
    "model_version",
    "ai_recommendation",
    "ai_confidence",
    "user_decision",
    "initial_decision",
    "outcome",
    "context",
    "subgroups",
    "metadata",
]

# What the service derives when it logs a decision (C6).
DERIVED_FIELDS = ["followed_ai", "calibration_category"]

# An entry of GET /audit-trail: the document that is hashed (C5), in the order shown.
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

# The entry's own fields: its identity, its place in the chain and when it was appended.
_ENTRY_OWN = {"entry_id", "sequence", "type", "decision_id", "logged_at", "hash", "previous_hash"}

# The decision fields an entry copies when it is appended: a snapshot of the decision then.
SNAPSHOT_FIELDS = [name for name in ENTRY_FIELDS if name not in _ENTRY_OWN]

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

# A compliance report's decision log (C12's CSV columns, in the contract's order).
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
