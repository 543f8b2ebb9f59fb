"""The checkpoint signing key, checked as every process starts (config/checks.py): a configured
key that cannot be read or is readable by others, or a generated key that went missing while
checkpoints signed by it exist, stops the start with its reason
(docs/reference/checkpoints.md, "The signing key")."""

from collections.abc import Sequence

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.core.checks import CheckMessage, Error

from audit import checkpoint_key
from config.checks import TAG


@checks.register(TAG)
def checkpoint_key_check(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    if settings.TRUSTCAL_PRODUCTION and not settings.TRUSTCAL_CHECKPOINT_KEY:
        return []  # trustcal.E002 says so; never generate a host's own key in production
    problem = checkpoint_key.key_problem()
    return [Error(problem, id="trustcal.E005")] if problem is not None else []
