"""The staff-console group that may see oversight figures per reviewer (worker monitoring,
docs/reference/oversight.md "Who sees what"). Created by a migration; its one permission is
added after every migrate, because on a fresh database permissions exist only after migrate."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.auth.models import Group, Permission
    from django.db.models import Manager

PER_PERSON_GROUP = "oversight per-person figures"
PER_PERSON_PERMISSION = ("oversight", "view_reviewer_figures")


def per_person_group_sync(groups: "Manager[Group]", permissions: "Manager[Permission]") -> None:
    """`groups`, `permissions`: managers of auth's Group and Permission (a migration passes its
    historical ones). Create the group if missing and give it the per-reviewer permission."""
    group, _ = groups.get_or_create(name=PER_PERSON_GROUP)
    app_label, codename = PER_PERSON_PERMISSION
    wanted = permissions.filter(content_type__app_label=app_label, codename=codename)
    group.permissions.add(*wanted)
