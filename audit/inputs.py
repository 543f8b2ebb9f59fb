"""The one validator of a decision item: the body of POST /log, of POST /calibrate, an item
of POST /log/batch and a row of import_decisions, as request body models (config.bodymodels).
`DecisionInput` is where a decision's field is declared: its rule in the annotation and, by
its `Entry` mark, whether the audit entries show it (audit.fields derives every list of
decision fields from it). Its model rule ties fields together (the confidence alias, review
time, probes). The models are also the OpenAPI components of the bodies (DecisionInput,
LateOutcomeInput, LogBatchInput). tests/audit/test_log_api.py holds the validator to every rule."""

import datetime as dt
from dataclasses import dataclass
from typing import Annotated, Any, Self

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from config.api import require_object
from config.bodymodels import BodyModel, body_parse
from config.bodyrules import (
    Choice,
    JsonObject,
    Number,
    Objects,
    PlainRule,
    Text,
    Timestamp,
    problem,
    problems,
)
from config.inputs import check_document

__all__ = [
    "DecisionInput",
    "Item",
    "LateOutcomeInput",
    "SubgroupsInput",
    "decision_validated",
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
PROBE_KINDS = ("known_wrong", "known_right")
BATCH_MAX = 1000

# Both review fields given may disagree by this much (clocks and rounding), no more.
REVIEW_TOLERANCE_SECONDS = 1.0


@dataclass(frozen=True)
class Entry:
    """Whether the audit entries show (and hash) a decision field: "always", "when_set" (the
    entry holds the key only when the decision has a value, so the entries and hashes of
    decisions without it are unchanged) or "never". A field with this mark is stored: a column
    of its name on Decision (and on AuditEntry when the entry shows it), and in the replay
    fingerprint."""

    shown: str


ALWAYS, WHEN_SET, NEVER = Entry("always"), Entry("when_set"), Entry("never")

_SUBGROUP = Text(SUBGROUP_VALUE_MAX, trim=True)


@dataclass(frozen=True)
class _CustomAttributes(PlainRule):
    """`subgroups.custom`: at most 32 values (trimmed, 1-256 characters) under keys of 1-256
    characters (trimmed; two keys that are the same once trimmed are refused); a null value is
    left out."""

    def check(self, raw: object) -> object:
        return None if raw is None else _custom_judged(raw)

    # Any: a JSON Schema document
    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "maxProperties": CUSTOM_KEYS_MAX,
            "additionalProperties": {"type": "string", "maxLength": SUBGROUP_VALUE_MAX},
            "description": "Further attributes, named custom.<key> in queries and findings",
        }


def _custom_judged(raw: object) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise problem("must be an object")
    if len(raw) > CUSTOM_KEYS_MAX:
        raise problem(f"must hold at most {CUSTOM_KEYS_MAX} entries")
    found: list[tuple[str, str]] = []
    out: dict[str, str] = {}
    seen: dict[str, str] = {}  # trimmed name -> the key as sent
    for key, item in raw.items():
        name = key.strip()
        if not name or len(name) > CUSTOM_KEY_MAX:
            found.append((key, f"keys are 1 to {CUSTOM_KEY_MAX} characters"))
            continue
        if name in seen:
            found.append((name, f"the keys {seen[name]!r} and {key!r} are the same once trimmed"))
            continue
        seen[name] = key
        if item is None:
            continue
        if not isinstance(item, str):
            found.append((name, "must be a string"))
            continue
        try:
            out[name] = _SUBGROUP.judge(item)
        except PydanticCustomError as exc:
            found.append((name, str(exc)))
    if found:
        raise problems(found)
    return out


# The one declaration of POST /log, POST /calibrate, batch items and POST /detect-bias.
class SubgroupsInput(BodyModel):
    """Demographic subgroups of a decision (docs/reference/bias.md, Subgroups): values trimmed
    (case kept), not empty, at most 256 characters."""

    model_config = ConfigDict(extra="forbid")
    gender: Annotated[str | None, _SUBGROUP] = None
    age_group: Annotated[str | None, _SUBGROUP] = None
    ethnicity: Annotated[str | None, _SUBGROUP] = None
    custom: Annotated[dict[str, str] | None, _CustomAttributes()] = None

    def stored(self) -> dict[str, str | dict[str, str]]:
        """As stored (and hashed): the attributes given only."""
        out: dict[str, str | dict[str, str]] = {}
        for name in ("gender", "age_group", "ethnicity"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.custom:
            out["custom"] = self.custom
        return out

    def attributes(self) -> dict[str, str]:
        """As attribute names (docs/reference/bias.md, Subgroups):
        {"gender": "female", "custom": {"region": "north"}} -> {"gender": "female", "custom.region": "north"}."""
        out = {name: value for name in ("gender", "age_group", "ethnicity") if (value := getattr(self, name))}
        for key, value in (self.custom or {}).items():
            out[f"custom.{key}"] = value
        return out


NO_SUBGROUPS = SubgroupsInput()


class ProbeInput(BodyModel):
    """A vigilance probe (docs/reference/oversight.md, Probe rules)."""

    model_config = ConfigDict(extra="forbid")
    kind: Annotated[str, Choice(PROBE_KINDS)]
    correct_decision: Annotated[
        str,
        Text(VALUE_MAX),
        Field(
            description="known_wrong: differs from ai_recommendation; known_right: equals it (trimmed, case-folded)"
        ),
    ]


_VALUE = Text(VALUE_MAX)


# A new decision field is declared here, with its rule and its `Entry` mark; the record
# (audit.records) stores it under its name and counts it in the replay fingerprint.
class DecisionInput(BodyModel):
    """A decision: the body of POST /log, an item of POST /log/batch, the body of POST /calibrate."""

    decision_id: Annotated[
        str | None, Text(ID_MAX, pattern=DECISION_ID_PATTERN, pattern_help=DECISION_ID_HELP), NEVER
    ] = None
    user_id: Annotated[str, Text(USER_ID_MAX), ALWAYS]
    # The person the decision is about (docs/reference/erasure.md): personal, what erasure
    # requests name; in the replay fingerprint only when sent, so older decisions keep theirs.
    subject_id: Annotated[str | None, Text(SUBJECT_ID_MAX), WHEN_SET] = None
    model_id: Annotated[str | None, Text(MODEL_ID_MAX), ALWAYS] = None
    model_version: Annotated[str | None, Text(MODEL_VERSION_MAX), ALWAYS] = None
    ai_recommendation: Annotated[str, _VALUE, ALWAYS]
    ai_confidence: Annotated[float | None, Number(0, 1), ALWAYS] = None
    confidence: Annotated[float | None, Number(0, 1), Field(description="Alias of ai_confidence")] = None
    user_decision: Annotated[str, _VALUE, ALWAYS]
    initial_decision: Annotated[str | None, _VALUE, NEVER] = None
    outcome: Annotated[str | None, _VALUE, ALWAYS] = None
    context: Annotated[str, Text(CONTEXT_MAX, allow_blank=True), ALWAYS] = ""
    subgroups: Annotated[SubgroupsInput, ALWAYS] = NO_SUBGROUPS
    metadata: Annotated[
        dict[str, object],
        JsonObject(METADATA_MAX_BYTES),
        Field(description="Any object, kept as sent"),
        NEVER,
    ] = Field(default_factory=dict)
    timestamp: Annotated[
        dt.datetime | None, Timestamp(), Field(description="When the decision was made; default now"), ALWAYS
    ] = None
    # Review effort and vigilance probes (docs/reference/oversight.md): optional, in the replay
    # fingerprint only when sent (so older decisions keep theirs), checked together below.
    review_started_at: Annotated[dt.datetime | None, Timestamp(), NEVER] = None
    review_seconds: Annotated[float | None, Number(0, REVIEW_SECONDS_MAX), WHEN_SET] = None
    probe: Annotated[ProbeInput | None, WHEN_SET] = None

    @model_validator(mode="after")
    def _together(self) -> Self:
        """The rules over several fields, once every field is valid: the alias, the review
        time and the probe (docs/reference/oversight.md, Review time rules and Probe rules).
        `review_seconds` stays as sent (None when only the start was sent: the record derives
        it from the stored timestamp). A valid probe's outcome becomes its correct decision."""
        found: list[tuple[str, str]] = []
        if self.confidence is not None:
            if self.ai_confidence is None:
                _complete(self, "ai_confidence", self.confidence)
            elif self.ai_confidence != self.confidence:
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
            else:
                # fixed: a replay with or without the outcome is the same payload
                _complete(self, "outcome", probe.correct_decision)
        if found:
            raise problems(found)
        return self


def _complete(model: BodyModel, name: str, value: object) -> None:
    """A value a model rule derives (frozen models are complete once validated)."""
    object.__setattr__(model, name, value)


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

    decision_id: Annotated[str, Text(ID_MAX)]
    outcome: Annotated[str, Text(VALUE_MAX)]


# Its items are judged one by one (item_validated), so that one bad item is rejected alone.
class LogBatchInput(BodyModel):
    """Up to 1,000 POST /log bodies, each with exactly the effects of the same POST /log call."""

    decisions: Annotated[
        list[dict[str, object]],
        Objects(1, BATCH_MAX),
        Field(description="1 to 1,000 POST /log bodies (decisions or outcome updates)"),
    ]


LATE_OUTCOME_KEYS = frozenset(("decision_id", "outcome"))


def is_late_outcome(body: dict[str, object]) -> bool:
    """`{"decision_id", "outcome"}` and nothing else records a later ground truth."""
    return len(body) == 2 and body.keys() == LATE_OUTCOME_KEYS and body.get("outcome") is not None


@dataclass(frozen=True)
class Item:
    """A validated decision item: `kind` is "decision" or "outcome" (a later ground truth)."""

    kind: str
    data: "DecisionInput | LateOutcomeInput"


def decision_validated(body: object) -> DecisionInput:
    """A request body as a decision (POST /calibrate has no outcome updates)."""
    return body_parse(DecisionInput, body)


def item_validated(body: object, *, strings_checked: bool = True, outcomes: bool = True) -> Item:
    """The one validator of every door. `strings_checked=False` where the parser left the
    strings to the item (a batch: one bad item, one rejection); `outcomes=False` where the
    body is always a decision (POST /calibrate)."""
    if not strings_checked:
        check_document(body)
    data = require_object(body)
    if outcomes and is_late_outcome(data):
        return Item("outcome", body_parse(LateOutcomeInput, data))
    return Item("decision", body_parse(DecisionInput, data))
