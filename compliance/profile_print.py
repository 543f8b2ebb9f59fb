"""System profiles as a printed report shows them (templates/compliance/_system_description.html):
each model's fields by their labels, an empty one as "not provided", and under the model who can
provide what is missing (docs/reference/system-profiles.md)."""

from typing import Any

from compliance.models import PROFILE_FIELDS

LABELS = {
    "name": "Name",
    "purpose": "Intended purpose",
    "deployment_context": "Deployment context",
    "provider": "Provider",
    "version": "Version",
    "intended_reviewers": "Intended reviewers",
}
NOT_PROVIDED = "not provided"


def system_description(profiles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for profile in profiles:
        missing = [LABELS[name].lower() for name in profile["not_provided"]]
        note = f"Not provided: {', '.join(missing)}. {profile['who_can_provide']}" if missing else ""
        out.append(
            {
                "model_id": profile["model_id"],
                "rows": [(LABELS[name], profile[name] or NOT_PROVIDED) for name in PROFILE_FIELDS],
                "note": note,
            }
        )
    return out
