"""The bodies of POST /erasures and PUT /retention-policy (docs/reference/erasure.md),
declared in the request-body layer (config.bodies)."""

from typing import Any

from audit.erasure import LEGAL_BASES
from audit.fields import SUBJECT_ID_MAX, USER_ID_MAX
from audit.models_erasure import MIN_RETENTION_DAYS
from config.bodies import Body, Field, Problems

REASON_MAX = 500
DAYS_MAX = 36_500


def _one_target(values: dict[str, Any], problems: Problems) -> None:
    given = [name for name in ("subject_id", "user_id") if values.get(name) is not None]
    if len(given) != 1 and not problems.has("subject_id") and not problems.has("user_id"):
        problems.add("subject_id", "give exactly one of subject_id and user_id")


ERASURE_REQUEST = Body(
    "ErasureInput",
    (
        Field("subject_id", max_length=SUBJECT_ID_MAX, help="The person the decisions are about"),
        Field("user_id", max_length=USER_ID_MAX, help="The reviewer (human decision maker)"),
        Field("reason", required=True, max_length=REASON_MAX, help="Why (1-500 characters)"),
        Field("legal_basis", "choice", required=True, choices=LEGAL_BASES),
        Field(
            "override_minimum",
            "bool",
            default=False,
            help="Erase entries younger than the policy's min_days now instead of scheduling",
        ),
    ),
    checks=(_one_target,),
    unknown=False,
    doc="An erasure request (docs/reference/erasure.md).",
)


def _max_after_min(values: dict[str, Any], problems: Problems) -> None:
    low, high = values.get("min_days") or MIN_RETENTION_DAYS, values.get("max_days")
    if high is not None and high < low and not problems.has("max_days"):
        problems.add("max_days", "must be at least min_days")


RETENTION_POLICY = Body(
    "RetentionPolicyInput",
    (
        Field(
            "min_days", "integer", minimum=MIN_RETENTION_DAYS, maximum=DAYS_MAX, default=MIN_RETENTION_DAYS
        ),
        Field("max_days", "integer", minimum=MIN_RETENTION_DAYS, maximum=DAYS_MAX),
        Field("legal_hold", "bool", default=False),
    ),
    checks=(_max_after_min,),
    unknown=False,
    doc="The retention of personal data in the audit trail (docs/reference/erasure.md).",
)
