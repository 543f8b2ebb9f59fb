"""The bodies of POST /admin/api-keys and DELETE /admin/api-keys/:id (docs/reference/access.md,
Key administration), declared once (config.bodies)."""

from config.bodies import Body, Field
from keys.models import CUSTOMER_ID_HELP, CUSTOMER_ID_PATTERN, Tier

DESCRIPTION_MAX = 500
REASON_MAX = 500

KEY_CREATE = Body(
    "ApiKeyCreateInput",
    (
        Field(
            "customer_id",
            required=True,
            max_length=64,
            pattern=CUSTOMER_ID_PATTERN.removeprefix("^").removesuffix("$"),
            pattern_help=CUSTOMER_ID_HELP,
        ),
        Field("tier", "choice", required=True, choices=tuple(Tier.values)),
        Field("description", max_length=DESCRIPTION_MAX, allow_blank=True, default=""),
        Field("is_admin", "bool", default=False),
    ),
)

KEY_REVOKE = Body(
    "ApiKeyRevokeInput",
    (
        Field(
            "reason",
            max_length=REASON_MAX,
            allow_blank=True,
            default="",
            help="Why the key is revoked (kept in the admin audit log)",
        ),
    ),
)
