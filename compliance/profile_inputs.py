"""The bodies of PUT and PATCH /system-profiles/:model_id (docs/reference/system-profiles.md), as
request body models (config.bodymodels). Unknown keys are refused: a misspelt field must not
leave the report printing "not provided" for a value the caller thinks it sent."""

from typing import Annotated

from pydantic import ConfigDict, Field, StringConstraints

from compliance.models import PROFILE_FIELDS
from config.bodymodels import BodyModel
from config.bodyrules import text


def _rule(name: str) -> StringConstraints:
    return text(PROFILE_FIELDS[name], blank=True, trim=True)


HELP = {
    "name": "The system's name as its deployer knows it",
    "purpose": "What the system is for: the decisions it recommends",
    "deployment_context": "Where, on whom and how it is used (the human review before a decision takes effect)",
    "provider": "Who provides the system (the developer or vendor)",
    "version": "The version the deployer runs",
    "intended_reviewers": "Who is meant to review its recommendations (roles, training)",
}


class SystemProfileInput(BodyModel):
    """PUT: the whole profile; a field left out (or empty) is not provided."""

    model_config = ConfigDict(extra="forbid")
    name: Annotated[str, _rule("name"), Field(description=HELP["name"])] = ""
    purpose: Annotated[str, _rule("purpose"), Field(description=HELP["purpose"])] = ""
    deployment_context: Annotated[
        str, _rule("deployment_context"), Field(description=HELP["deployment_context"])
    ] = ""
    provider: Annotated[str, _rule("provider"), Field(description=HELP["provider"])] = ""
    version: Annotated[str, _rule("version"), Field(description=HELP["version"])] = ""
    intended_reviewers: Annotated[
        str, _rule("intended_reviewers"), Field(description=HELP["intended_reviewers"])
    ] = ""


class SystemProfilePatchInput(BodyModel):
    """PATCH: only the fields sent change; null or "" clears one."""

    model_config = ConfigDict(extra="forbid")
    partial = True
    name: Annotated[str | None, _rule("name"), Field(description=HELP["name"])] = None
    purpose: Annotated[str | None, _rule("purpose"), Field(description=HELP["purpose"])] = None
    deployment_context: Annotated[
        str | None, _rule("deployment_context"), Field(description=HELP["deployment_context"])
    ] = None
    provider: Annotated[str | None, _rule("provider"), Field(description=HELP["provider"])] = None
    version: Annotated[str | None, _rule("version"), Field(description=HELP["version"])] = None
    intended_reviewers: Annotated[
        str | None, _rule("intended_reviewers"), Field(description=HELP["intended_reviewers"])
    ] = None
