"""The one validator of a decision item: the body of POST /log, of POST /calibrate, an item
of POST /log/batch and a row of import_decisions, as request body models (config.bodymodels).
`DecisionInput` is where a decision's field is declared: its rule in the annotation and, by
its `Entry` mark, whether the audit entries show it (audit.fields derives every list of
decision fields from it). Its model rule ties fields together (the confidence alias, review
time, probes). The models are also the OpenAPI components of the bodies (DecisionInput,
LateOutcomeInput, LogBatchInput). tests/audit/test_log_api.py holds the validator to every rule."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Annotated, Any, Literal, NamedTuple, Self, get_args

from pydantic import (
    AliasChoices,
    AliasPath,
    ConfigDict,
    Field,
    InstanceOf,
    TypeAdapter,
    field_validator,
    model_validator,
)

from config.api import require_object
from config.bodymodels import BodyModel, body_parse
from config.bodyrules import Timestamp, json_object, problems, text
from config.jsondoc import JSONObject
from config.jsonwalk import check_document

__all__ = [
    "DecisionInput",
    "Item",
    "LateOutcomeInput",
    "SubgroupsInput",
    "decision_items",
    "decision_validated",
    "decisions_at_once",
    "item_validated",
]

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
ProbeKind = Literal["known_wrong", "known_right"]
PROBE_KINDS: tuple[str, ...] = get_args(ProbeKind)
BATCH_MAX = 1000

# Both review fields given may disagree by this much (clocks and rounding), no more.
REVIEW_TOLERANCE_SECONDS = 1.0


@dataclass(frozen=True)
class Entry:
    """Whether the audit entries show (and hash) a decision field: "always", "when_set" (the
    entry holds the key only when the decision has a value, so the entries and hashes of
    decisions without it are unchanged), "new_entries" (every entry appended since the field
    was added holds the key, null when the decision has none; an older entry holds none, its
    hash unchanged, and the key's absence tells a verifier that the hash does not cover it)
    or "never". A field with this mark is stored: a column
    of its name on Decision (and on AuditEntry when the entry shows it), and in the replay
    fingerprint."""

    shown: str


ALWAYS, WHEN_SET, NEVER = Entry("always"), Entry("when_set"), Entry("never")
NEW_ENTRIES = Entry("new_entries")

_SUBGROUP = text(SUBGROUP_VALUE_MAX, trim=True)
_CUSTOM_KEY = text(CUSTOM_KEY_MAX, trim=True)


# The one declaration of POST /log, POST /calibrate, batch items and POST /detect-bias.
class SubgroupsInput(BodyModel):
    """Demographic subgroups of a decision (docs/reference/bias.md, Subgroups): values trimmed
    (case kept), not empty, at most 256 characters."""

    model_config = ConfigDict(extra="forbid")
    gender: Annotated[str | None, _SUBGROUP] = None
    age_group: Annotated[str | None, _SUBGROUP] = None
    ethnicity: Annotated[str | None, _SUBGROUP] = None
    # A null value is left out (stored() and attributes() read the values given).
    custom: Annotated[
        dict[Annotated[str, _CUSTOM_KEY], Annotated[str, _SUBGROUP] | None] | None,
        Field(
            max_length=CUSTOM_KEYS_MAX,
            description="Further attributes, named custom.<key> in queries and findings",
        ),
    ] = None

    @field_validator("custom", mode="before")
    @classmethod
    def _keys_differ_once_trimmed(cls, raw: object) -> object:
        """Two keys that are the same once trimmed name one attribute twice: refused."""
        if not isinstance(raw, dict):
            return raw
        seen: dict[str, str] = {}  # trimmed name -> the key as sent
        found: list[tuple[str, str]] = []
        for key in raw:
            name = key.strip() if isinstance(key, str) else key
            if name in seen:
                found.append((name, f"the keys {seen[name]!r} and {key!r} are the same once trimmed"))
            seen.setdefault(name, key)
        if found:
            raise problems(found)
        return raw

    def stored(self) -> dict[str, str | dict[str, str]]:
        """As stored (and hashed): the attributes given only."""
        out: dict[str, str | dict[str, str]] = {}
        for name in ("gender", "age_group", "ethnicity"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        custom = self.custom_given()
        if custom:
            out["custom"] = custom
        return out

    def custom_given(self) -> dict[str, str]:
        """The custom attributes sent with a value."""
        return {key: value for key, value in (self.custom or {}).items() if value is not None}

    def attributes(self) -> dict[str, str]:
        """As attribute names (docs/reference/bias.md, Subgroups):
        {"gender": "female", "custom": {"region": "north"}} -> {"gender": "female", "custom.region": "north"}."""
        out = {name: value for name in ("gender", "age_group", "ethnicity") if (value := getattr(self, name))}
        for key, value in self.custom_given().items():
            out[f"custom.{key}"] = value
        return out


NO_SUBGROUPS = SubgroupsInput()


class ProbeInput(BodyModel):
    """A vigilance probe (docs/reference/oversight.md, Probe rules)."""

    model_config = ConfigDict(extra="forbid")
    kind: ProbeKind
    correct_decision: Annotated[
        str,
        text(VALUE_MAX),
        Field(
            description="known_wrong: differs from ai_recommendation; known_right: equals it (trimmed, case-folded)"
        ),
    ]


_VALUE = text(VALUE_MAX)
_CONFIDENCE = Field(ge=0, le=1)


# A new decision field is declared here, with its rule and its `Entry` mark; the record
# (audit.records) stores it under its name and counts it in the replay fingerprint.
class DecisionInput(BodyModel):
    """A decision: the body of POST /log, an item of POST /log/batch, the body of POST /calibrate."""

    decision_id: Annotated[
        str | None, text(ID_MAX, pattern=DECISION_ID_PATTERN, help=DECISION_ID_HELP), NEVER
    ] = None
    user_id: Annotated[str, text(USER_ID_MAX), ALWAYS]
    # The person the decision is about (docs/reference/erasure.md): personal, what erasure
    # requests name; in the replay fingerprint only when sent, so older decisions keep theirs.
    subject_id: Annotated[str | None, text(SUBJECT_ID_MAX), WHEN_SET] = None
    model_id: Annotated[str | None, text(MODEL_ID_MAX), ALWAYS] = None
    model_version: Annotated[str | None, text(MODEL_VERSION_MAX), ALWAYS] = None
    ai_recommendation: Annotated[str, _VALUE, ALWAYS]
    # `confidence` is its alias: read from either key; both sent must agree (_together).
    ai_confidence: Annotated[
        float | None, _CONFIDENCE, Field(validation_alias=AliasChoices("ai_confidence", "confidence")), ALWAYS
    ] = None
    confidence: Annotated[float | None, _CONFIDENCE, Field(description="Alias of ai_confidence")] = None
    user_decision: Annotated[str, _VALUE, ALWAYS]
    # In the canonical text of every entry appended since it was hashed (docs/reference/decisions.md,
    # "What the hash covers"): the switch rate, RAIR and RSR rest on it.
    initial_decision: Annotated[str | None, _VALUE, NEW_ENTRIES] = None
    # A probe's outcome is its correct decision (docs/reference/oversight.md, Probe rules):
    # without an outcome, the probe's correct_decision is read as one.
    outcome: Annotated[
        str | None,
        _VALUE,
        Field(validation_alias=AliasChoices("outcome", AliasPath("probe", "correct_decision"))),
        ALWAYS,
    ] = None
    context: Annotated[str, text(CONTEXT_MAX, blank=True), ALWAYS] = ""
    subgroups: Annotated[SubgroupsInput, ALWAYS] = NO_SUBGROUPS
    metadata: Annotated[
        JSONObject,  # the caller's own JSON
        json_object(METADATA_MAX_BYTES),
        Field(description="Any object, kept as sent"),
        NEVER,
    ] = Field(default_factory=dict)
    timestamp: Annotated[
        Timestamp | None, Field(description="When the decision was made; default now"), ALWAYS
    ] = None
    # Review effort and vigilance probes (docs/reference/oversight.md): optional, in the replay
    # fingerprint only when sent (so older decisions keep theirs), checked together below.
    review_started_at: Annotated[Timestamp | None, NEVER] = None
    review_seconds: Annotated[float | None, Field(ge=0, le=REVIEW_SECONDS_MAX), WHEN_SET] = None
    probe: Annotated[ProbeInput | None, WHEN_SET] = None

    @model_validator(mode="after")
    def _together(self) -> Self:
        """The rules over several fields, once every field is valid: the alias, the review
        time and the probe (docs/reference/oversight.md, Review time rules and Probe rules).
        `review_seconds` stays as sent (None when only the start was sent: the record derives
        it from the stored timestamp). A probe's outcome is its correct_decision as sent: an
        outcome sent with it that is the same once trimmed and case-folded is read as the
        correct decision (without one, `outcome` reads it through its alias path)."""
        if self.confidence is None and self.review_started_at is None and self.probe is None:
            return self  # most decisions: no rule over several fields applies
        found: list[tuple[str, str]] = []
        if self.confidence is not None and self.ai_confidence != self.confidence:
            found.append(("confidence", "differs from ai_confidence; send one of them"))
        found.extend(_review_problems(self))
        probe, recommendation = self.probe, self.ai_recommendation
        if probe is not None:
            same = _norm(probe.correct_decision) == _norm(recommendation)
            if probe.kind == "known_wrong" and same:
                found.append(
                    (
                        "probe.correct_decision",
                        "a known_wrong probe's correct_decision must differ from ai_recommendation",
                    )
                )
            elif probe.kind == "known_right" and not same:
                found.append(
                    (
                        "probe.correct_decision",
                        "a known_right probe's correct_decision must equal ai_recommendation",
                    )
                )
            elif self.outcome is not None and _norm(self.outcome) != _norm(probe.correct_decision):
                found.append(
                    ("outcome", "a probe's outcome is its correct_decision: send that, or no outcome")
                )
        if found:
            raise problems(found)
        if probe is not None and self.outcome != probe.correct_decision:
            return self.model_copy(update={"outcome": probe.correct_decision})
        return self


def _norm(value: str) -> str:
    return value.strip().casefold()


def _review_problems(body: DecisionInput) -> list[tuple[str, str]]:
    started, seconds = body.review_started_at, body.review_seconds
    if started is None:
        return []
    # Without a timestamp the decision is made now: the checks use now, the record the stored
    # timestamp (a few milliseconds later, so the span only grows by as much).
    made = body.timestamp or dt.datetime.now(dt.UTC)
    span = (made - started).total_seconds()
    if span < 0:
        return [("review_started_at", "must not be after the decision's timestamp")]
    if seconds is None and span > REVIEW_SECONDS_MAX:
        return [
            (
                "review_started_at",
                f"must be at most {REVIEW_SECONDS_MAX:,} seconds before the decision's timestamp",
            )
        ]
    if seconds is not None and abs(span - seconds) > REVIEW_TOLERANCE_SECONDS:
        return [
            (
                "review_seconds",
                f"differs from timestamp - review_started_at ({span:g} s) by more than "
                f"{REVIEW_TOLERANCE_SECONDS:g} s; send one of them, or both in agreement",
            )
        ]
    return []


class LateOutcomeInput(BodyModel):
    """POST /log {"decision_id", "outcome"} and nothing else: a later ground truth."""

    decision_id: Annotated[str, text(ID_MAX)]
    outcome: Annotated[str, text(VALUE_MAX)]


# Its items are judged one by one (item_validated), so that one bad item is rejected alone.
class LogBatchInput(BodyModel):
    """Up to 1,000 POST /log bodies, each with exactly the effects of the same POST /log call."""

    # Each item an object, checked and passed on as parsed (a dict's check would copy it).
    decisions: Annotated[
        list[InstanceOf[dict[str, object]]],
        Field(min_length=1, max_length=BATCH_MAX),
        Field(description="1 to 1,000 POST /log bodies (decisions or outcome updates)"),
    ]


LATE_OUTCOME_KEYS = frozenset(("decision_id", "outcome"))
DECLARED = frozenset(DecisionInput.model_fields)


def is_late_outcome(body: dict[str, object]) -> bool:
    """`{"decision_id", "outcome"}` and nothing else records a later ground truth."""
    return len(body) == 2 and body.keys() == LATE_OUTCOME_KEYS and body.get("outcome") is not None


class Item(NamedTuple):
    """A validated decision item: `kind` is "decision" or "outcome" (a later ground truth)."""

    kind: Literal["decision", "outcome"]
    data: "DecisionInput | LateOutcomeInput"


def decision_items(decisions: list[Any]) -> list[Item]:  # Any: what decisions_at_once gave, all DecisionInput
    """`Item("decision", d)` of each, each made by tuple's own constructor in one C pass:
    Item's generated `__new__` is a Python call, about 0.2 ms a 1,000-item batch."""
    return list(map(tuple.__new__, repeat(Item), zip(repeat("decision"), decisions)))


def decision_validated(body: object) -> DecisionInput:
    """A request body as a decision (POST /calibrate has no outcome updates)."""
    return body_parse(DecisionInput, body)


def item_validated(body: object, *, strings_checked: bool = True, outcomes: bool = True) -> Item:
    """The one validator of every door. `strings_checked=False` where the parser left the
    strings to the item (a batch: one bad item, one rejection): the model judges its own
    fields' strings and numbers, and the keys it does not declare are walked here;
    `outcomes=False` where the body is always a decision (POST /calibrate)."""
    data = require_object(body)
    if not strings_checked and not data.keys() <= DECLARED:
        check_document({key: value for key, value in data.items() if key not in DECLARED})
    if outcomes and is_late_outcome(data):
        return Item("outcome", body_parse(LateOutcomeInput, data))
    return Item("decision", body_parse(DecisionInput, data))


# Any: an item the model refuses comes back as sent, to be judged alone
_AT_ONCE: TypeAdapter[list[Any]] = TypeAdapter(
    list[Annotated[DecisionInput | Any, Field(union_mode="left_to_right")]]
)


def decisions_at_once(items: Sequence[object]) -> list[object]:
    """A batch's decisions validated in one call: each item its `DecisionInput`, or the item as
    sent where the model refuses it, for `item_validated` to judge alone (a late outcome, a bad
    item, keys the model does not declare, which `item_validated` walks). An item the model
    takes is validated as `item_validated` would: a null is a field left out there, and here
    each null the model takes reads as that field left out
    (tests/audit/test_batch_validation.py holds every field to it)."""
    return _AT_ONCE.validate_python(items, extra="forbid")
