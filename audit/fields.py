"""A decision's fields, written once. Everything in audit that names them (the record and its
fingerprint, the chain append, the responses, verification) takes them from here; the output
serializers are checked against these lists when they are imported."""

from dataclasses import dataclass

from config.bodies import Body, Field

# Field sizes: the model's columns and the validator use the same numbers, so bad input is a
# 400 and never a database error.
ID_MAX = 128
USER_ID_MAX = 256
SUBJECT_ID_MAX = 128
MODEL_ID_MAX = 256
MODEL_VERSION_MAX = 128
VALUE_MAX = 1000
CONTEXT_MAX = 10_000
METADATA_MAX_BYTES = 16 * 1024
REVIEW_SECONDS_MAX = 86_400


SUBGROUP_VALUE_MAX = 256
CUSTOM_KEY_MAX = 256
CUSTOM_KEYS_MAX = 32
DECISION_ID_PATTERN = r"[A-Za-z0-9._:-]{1,128}"
DECISION_ID_HELP = "1-128 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'"
PROBE_KINDS = ("known_wrong", "known_right")


def _group(name: str) -> Field:
    return Field(name, trim=True, max_length=SUBGROUP_VALUE_MAX)


# A decision's subgroups (docs/reference/bias.md, Subgroups), the one declaration of POST /log,
# POST /calibrate, batch items and POST /detect-bias: values trimmed (case kept), not empty, at
# most 256 characters; `custom` at most 32 of them under keys of 1-256 characters (trimmed).
SUBGROUPS = Body(
    "SubgroupsInput",
    (
        _group("gender"),
        _group("age_group"),
        _group("ethnicity"),
        Field(
            "custom",
            "map",
            max_length=CUSTOM_KEYS_MAX,
            key_max=CUSTOM_KEY_MAX,
            trim=True,
            item=Field("", trim=True, max_length=SUBGROUP_VALUE_MAX),
            help="Further attributes, named custom.<key> in queries and findings",
        ),
    ),
    unknown=False,
    sparse=True,  # stored (and hashed) with the attributes given only
    doc="Demographic subgroups of a decision (docs/reference/bias.md, Subgroups).",
)

PROBE = Body(
    "ProbeInput",
    (
        Field("kind", "choice", required=True, choices=PROBE_KINDS),
        Field(
            "correct_decision",
            required=True,
            max_length=VALUE_MAX,
            help="known_wrong: differs from ai_recommendation; known_right: equals it (trimmed, case-folded)",
        ),
    ),
    unknown=False,
    doc="A vigilance probe (docs/reference/oversight.md, Probe rules).",
)


@dataclass(frozen=True)
class DecisionField(Field):
    """One field a client sends for a decision (POST /log, POST /calibrate, POST /log/batch,
    import_decisions): a field of the request-body layer (config.bodies) plus `entry`. This
    declaration is the whole of a new field for the decision pipeline: the validator
    (audit.inputs) parses it by its kind, the record (audit.records) stores it under `name` and
    counts it in the replay fingerprint, and `entry` says whether the audit entries show (and
    hash) it: "always", "when_set" (the entry holds the key only when the decision has a value,
    so the entries and hashes of decisions without it are unchanged) or "never". A column of
    that name on Decision (and on AuditEntry when the entry shows it) is the model's side."""

    entry: str = "never"


def _value(name: str, *, required: bool = False, entry: str = "always") -> DecisionField:
    return DecisionField(name, required=required, max_length=VALUE_MAX, entry=entry)


DECISION_INPUTS: tuple[DecisionField, ...] = (
    DecisionField(
        "decision_id", max_length=ID_MAX, pattern=DECISION_ID_PATTERN, pattern_help=DECISION_ID_HELP
    ),
    DecisionField("user_id", required=True, max_length=USER_ID_MAX, entry="always"),
    # The person the decision is about (docs/reference/erasure.md): personal, what erasure
    # requests name; in the replay fingerprint only when sent, so older decisions keep theirs.
    DecisionField("subject_id", max_length=SUBJECT_ID_MAX, entry="when_set"),
    DecisionField("model_id", max_length=MODEL_ID_MAX, entry="always"),
    DecisionField("model_version", max_length=MODEL_VERSION_MAX, entry="always"),
    _value("ai_recommendation", required=True),
    DecisionField("ai_confidence", "number", minimum=0, maximum=1, entry="always", alias="confidence"),
    _value("user_decision", required=True),
    _value("initial_decision", entry="never"),
    _value("outcome"),
    DecisionField("context", max_length=CONTEXT_MAX, allow_blank=True, default="", entry="always"),
    DecisionField("subgroups", "object", body=SUBGROUPS, default=dict, entry="always"),
    DecisionField(
        "metadata", "object", max_length=METADATA_MAX_BYTES, default=dict, help="Any object, kept as sent"
    ),
    DecisionField("timestamp", "timestamp", entry="always", help="When the decision was made; default now"),
    # Review effort and vigilance probes (docs/reference/oversight.md): optional, in the replay
    # fingerprint only when sent (so older decisions keep theirs), checked together by
    # audit.inputs.oversight_checked.
    DecisionField("review_started_at", "timestamp"),
    DecisionField("review_seconds", "number", minimum=0, maximum=REVIEW_SECONDS_MAX, entry="when_set"),
    DecisionField("probe", "object", body=PROBE, entry="when_set"),
)

# Fields counted in the replay fingerprint only when sent.
FINGERPRINT_WHEN_SENT = ("subject_id", "review_started_at", "review_seconds", "probe")

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
