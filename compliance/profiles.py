"""System profiles (docs/reference/system-profiles.md): what the deployer says of each of its
models (name, purpose, deployment context, provider, version, intended reviewers), edited through
the API and the staff console by the one service here, and printed in both report templates. A
model that has decisions but no profile reads as a profile whose every field is empty: the
reports print "not provided" and who can provide it."""

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from django.db import transaction
from django.utils import timezone

from calibration import selectors as calibration_selectors
from compliance.exceptions import SystemProfileLimitReached
from compliance.models import PROFILE_FIELDS, SystemProfile
from config.exceptions import NotFound
from config.jsondoc import JSONObject
from config.timeutils import isoformat
from keys.models import Customer

PROFILES_MAX = 1000  # profiles a customer keeps (docs/reference/limits.md)


def who_provides(model_id: str) -> str:
    """Who can fill in a profile's empty fields, and where (printed under them in the reports)."""
    return (
        "The deployer's administrator can provide what is missing in the staff console (Reports, System "
        f"profiles) or with PUT /v1/system-profiles/{quote(model_id, safe='/')}."
    )


@dataclass(frozen=True)
class Profile:
    """A model's profile as the API, the console and the reports show it."""

    model_id: str
    values: dict[str, str] = field(default_factory=lambda: dict.fromkeys(PROFILE_FIELDS, ""))
    updated_at: dt.datetime | None = None
    updated_by: str = ""

    @property
    def not_provided(self) -> list[str]:
        return [name for name in PROFILE_FIELDS if not self.values[name].strip()]

    def as_dict(self) -> JSONObject:
        return {
            "model_id": self.model_id,
            **self.values,
            "not_provided": self.not_provided,
            "updated_at": isoformat(self.updated_at) if self.updated_at else None,
            "updated_by": self.updated_by or None,
        }


def _profile(row: SystemProfile) -> Profile:
    return Profile(
        model_id=row.model_id,
        values={name: getattr(row, name) for name in PROFILE_FIELDS},
        updated_at=row.updated_at,
        updated_by=row.updated_by,
    )


def profile_get(*, customer: Customer, model_id: str) -> Profile:
    """The model's profile; an empty one when it has decisions but no profile; NotFound when it
    has neither (a model id the customer never used)."""
    row = SystemProfile.objects.filter(customer=customer, model_id=model_id).first()
    if row is not None:
        return _profile(row)
    if calibration_selectors.model_ids_with_decisions(customer, model_id):
        return Profile(model_id=model_id)
    raise NotFound("No decision names that model and it has no system profile.")


def profile_list(*, customer: Customer) -> list[Profile]:
    """Every model the customer's decisions name or that has a profile, by model id."""
    stored = {row.model_id: _profile(row) for row in SystemProfile.objects.filter(customer=customer)}
    used = calibration_selectors.model_ids_with_decisions(customer)
    return [stored.get(model_id) or Profile(model_id=model_id) for model_id in sorted({*stored, *used})]


def profiles_of(*, customer: Customer, model_ids: list[str]) -> list[JSONObject]:
    """The profiles of the models a report's decisions name, in that order (a report prints every
    one, "not provided" where a field is empty)."""
    stored = {
        row.model_id: _profile(row)
        for row in SystemProfile.objects.filter(customer=customer, model_id__in=model_ids)
    }
    return [
        {
            **(stored.get(model_id) or Profile(model_id=model_id)).as_dict(),
            "who_can_provide": who_provides(model_id),
        }
        for model_id in model_ids
    ]


@transaction.atomic
def profile_save(
    *, customer: Customer, model_id: str, changes: Mapping[str, str | None], replace: bool, by: str
) -> tuple[Profile, bool]:
    """Write a model's profile: `replace` (PUT) sets every field, those left out empty; otherwise
    (PATCH) only the fields in `changes` change, None clearing one. Returns the profile and whether
    it was created. A customer keeps at most PROFILES_MAX profiles."""
    # The customer's row first: two writers of a new profile wait for each other here, so the
    # second one finds the first's row and the count is exact.
    Customer.objects.select_for_update().filter(pk=customer.pk).exists()
    row = SystemProfile.objects.filter(customer=customer, model_id=model_id).first()
    created = row is None
    if row is None:
        if SystemProfile.objects.filter(customer=customer).count() >= PROFILES_MAX:
            raise SystemProfileLimitReached(
                f"The customer already has {PROFILES_MAX} system profiles; change one of them instead."
            )
        row = SystemProfile(customer=customer, model_id=model_id)
    for name in PROFILE_FIELDS:
        if replace or name in changes:
            setattr(row, name, changes.get(name) or "")
    row.updated_at = timezone.now()
    row.updated_by = by[:255]
    row.save()
    return _profile(row), created
