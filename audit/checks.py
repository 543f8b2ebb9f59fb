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
from config.deployment_keys import CHECKPOINT_KEY, fingerprint_claim, public_key_fingerprint


@checks.register(TAG)
def checkpoint_key_check(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[CheckMessage]:
    if settings.TRUSTCAL_PRODUCTION and not settings.TRUSTCAL_CHECKPOINT_KEY:
        return []  # trustcal.E002 says so; never generate a host's own key in production
    problem = checkpoint_key.key_problem()
    if problem is not None:
        return [Error(problem, id="trustcal.E005")]
    return _checkpoint_key_shared() if settings.TRUSTCAL_PRODUCTION else []


def _checkpoint_key_shared() -> list[CheckMessage]:
    """trustcal.E008: this host signs with the deployment's checkpoint key (config/deployment_keys.py)."""
    mine = public_key_fingerprint(checkpoint_key.public_key())
    registered = fingerprint_claim(CHECKPOINT_KEY, mine)
    if registered is None or registered == mine:
        return []
    return [
        Error(
            f"TRUSTCAL_CHECKPOINT_KEY ({settings.TRUSTCAL_CHECKPOINT_KEY}) is not the key the other "
            f"hosts of this deployment sign with (public key fingerprint {mine[:12]}... against the "
            f"registered {registered[:12]}...): checkpoints signed here would fail every check "
            "with the published key. Copy the deployment's key file to this host; to rotate the "
            "key, follow docs/deploy.md, 'One key and one secret everywhere'.",
            id="trustcal.E008",
        )
    ]
