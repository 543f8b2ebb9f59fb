"""The bodies of POST /erasures and PUT /retention-policy (docs/reference/erasure.md), as
request body models (config.bodymodels)."""

from typing import Annotated, Literal, Self

from pydantic import ConfigDict, Field, StrictInt, model_validator

from audit.erasure import LEGAL_BASES
from audit.inputs import SUBJECT_ID_MAX, USER_ID_MAX
from audit.models_erasure import MIN_RETENTION_DAYS
from config.bodymodels import BodyModel
from config.bodyrules import problem, problems, text
from config.jsondoc import JSONValue

REASON_MAX = 500
DAYS_MAX = 36_500


class ErasureInput(BodyModel):
    """An erasure request (docs/reference/erasure.md)."""

    model_config = ConfigDict(extra="forbid")
    subject_id: Annotated[
        str | None, text(SUBJECT_ID_MAX), Field(description="The person the decisions are about")
    ] = None
    user_id: Annotated[
        str | None, text(USER_ID_MAX), Field(description="The reviewer (human decision maker)")
    ] = None
    reason: Annotated[str, text(REASON_MAX), Field(description="Why (1-500 characters)")]
    legal_basis: Literal[LEGAL_BASES]  # type: ignore[valid-type]  # the legal bases named
    override_minimum: Annotated[
        bool, Field(description="Erase entries younger than the policy's min_days now instead of scheduling")
    ] = False

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if (self.subject_id is None) == (self.user_id is None):
            raise problem("give exactly one of subject_id and user_id", at="subject_id")
        return self

    def target(self) -> tuple[str, str]:
        """(which field names the person, its value)."""
        if self.subject_id is not None:
            return "subject_id", self.subject_id
        return "user_id", self.user_id or ""  # one of the two is given (_one_target)


_DAYS = Field(ge=MIN_RETENTION_DAYS, le=DAYS_MAX)


class RetentionPolicyInput(BodyModel):
    """The retention of personal data in the audit trail (docs/reference/erasure.md): every
    field is sent, each time (a field left out, or the body `{}`, would otherwise lift a legal
    hold or a maximum without anyone saying so); `max_days` may be null (no maximum)."""

    model_config = ConfigDict(extra="forbid")
    nulls_kept = frozenset({"max_days"})  # null: no maximum, and it must be sent
    min_days: Annotated[StrictInt, _DAYS]
    max_days: Annotated[StrictInt | None, _DAYS, Field(description="Required; null: no maximum")] = None
    legal_hold: bool

    @model_validator(mode="before")
    @classmethod
    def _every_field_sent(cls, data: JSONValue) -> JSONValue:  # the JSON body, not yet judged
        if isinstance(data, dict):
            missing = [name for name in cls.model_fields if name not in data]
            if missing:
                raise problems([(name, "is required (send every field)") for name in missing])
        return data

    @model_validator(mode="after")
    def _max_after_min(self) -> Self:
        if self.max_days is not None and self.max_days < self.min_days:
            raise problem("must be at least min_days", at="max_days")
        return self
