"""The "compliance staff" group: what compliance officers may do in the staff console.

Permissions are named, never imported: "app_label.codename", or "app_label.prefix*" for every
permission of an app whose codename starts with the prefix (so report models that an app adds later
are covered by name). The group never holds a permission of FORBIDDEN_APPS: API keys and webhooks are
for superusers and integrators only.
"""

from fnmatch import fnmatchcase

COMPLIANCE_STAFF = "compliance staff"

COMPLIANCE_STAFF_PERMISSIONS = (
    # Alert triage: see and change amplification alerts (the actions call the alert service).
    "fairness.view_amplificationalert",
    "fairness.change_amplificationalert",
    "fairness.view_alertstatuschange",
    "fairness.view_fairnesssignal",
    "bias.view_biasalert",
    "bias.view_biasalertfinding",
    "bias.view_modelfavorablevalues",
    # Decisions and calibration: read only.
    "audit.view_decision",
    "audit.view_auditentry",
    "audit.view_chainhead",
    "audit.view_signedcheckpoint",
    # Erasures of personal data (docs/reference/erasure.md): see them and request one.
    "audit.view_erasure",
    "audit.add_erasure",
    # The retention policy and legal hold: see and change them (each change is an entry).
    "audit.view_retentionpolicy",
    "audit.add_retentionpolicy",
    "audit.change_retentionpolicy",
    "calibration.view_userdailyaggregate",
    "calibration.view_riskuserstate",
    "calibration.view_threshold",
    # Oversight: the team's review-effort and vigilance figures. Not the per-reviewer rows
    # (oversight.view_reviewer_figures): those belong to the "oversight per-person figures" group.
    "oversight.view_team_figures",
    # Drift monitors and alarms (docs/reference/drift.md): see them (a reviewer's monitors also need
    # oversight.view_reviewer_figures) and acknowledge an alarm with its disposition.
    "drift.view_driftmonitor",
    "drift.view_driftalarm",
    "drift.acknowledge_alarm",
    # ... and create, change and delete monitors (through the API's services, with their entries).
    "drift.add_driftmonitor",
    "drift.change_driftmonitor",
    "drift.delete_driftmonitor",
    # Reports: whatever the compliance app registers, to read, request and download.
    "compliance.view_*",
    "compliance.add_*",
    "compliance.download_*",
    # System profiles (docs/reference/system-profiles.md): what the reports say of each model.
    "compliance.change_systemprofile",
)
FORBIDDEN_APPS = ("keys", "webhooks")


def permission_matches(app_label: str, codename: str, patterns=COMPLIANCE_STAFF_PERMISSIONS) -> bool:
    if app_label in FORBIDDEN_APPS:
        return False
    return any(fnmatchcase(f"{app_label}.{codename}", pattern) for pattern in patterns)


def compliance_staff_group_sync(groups, permissions) -> None:
    """`groups`, `permissions`: managers of auth's Group and Permission (a migration passes its
    historical ones). Create the group if missing, add every permission the patterns name (new models' included)
    and take away any key or webhook permission. Permissions added by hand stay."""
    group, _ = groups.get_or_create(name=COMPLIANCE_STAFF)
    wanted = [
        perm.pk
        for perm in permissions.select_related("content_type")
        if permission_matches(perm.content_type.app_label, perm.codename)
    ]
    group.permissions.add(*wanted)
    forbidden = group.permissions.filter(content_type__app_label__in=FORBIDDEN_APPS)
    if forbidden.exists():
        group.permissions.remove(*forbidden)
