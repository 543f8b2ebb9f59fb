"""System profiles as a printed report shows them (templates/compliance/_system_description.html):
each model's fields by their labels, an empty one as "not provided", and under the model who can
provide what is missing (docs/reference/system-profiles.md)."""

from compliance.models import PROFILE_FIELDS
from config.jsondoc import JSONObject

LABELS = {
    "name": "Name",
    "purpose": "Intended purpose",
    "deployment_context": "Deployment context",
    "provider": "Provider",
    "version": "Version",
    "intended_reviewers": "Intended reviewers",
}
NOT_PROVIDED = "not provided"


def _versions(profile: JSONObject) -> str:
    """The versions the period's decisions name, with how many each: what was in use."""
    seen = profile.get("versions_in_period") or []
    if not seen:
        return "no decision of the period names a version"
    if len(seen) == 1:
        return f"{seen[0]['model_version'] or 'not recorded'} (all {seen[0]['decisions']:,} decisions of the period)"
    return ", ".join(f"{v['model_version'] or 'not recorded'} ({v['decisions']:,} decisions)" for v in seen)


def _rows(profile: JSONObject, name: str) -> list[tuple[str, str]]:
    if name != "version":
        return [(LABELS[name], profile[name] or NOT_PROVIDED)]
    return [
        ("Version in the period's decisions", _versions(profile)),
        ("Version in the profile", profile[name] or NOT_PROVIDED),
    ]


def system_description(profiles: list[JSONObject]) -> list[JSONObject]:
    out = []
    for profile in profiles:
        missing = [LABELS[name].lower() for name in profile["not_provided"]]
        note = f"Not provided: {', '.join(missing)}. {profile['who_can_provide']}" if missing else ""
        out.append(
            {
                "model_id": profile["model_id"],
                "rows": [row for name in PROFILE_FIELDS for row in _rows(profile, name)],
                "note": note,
            }
        )
    return out
