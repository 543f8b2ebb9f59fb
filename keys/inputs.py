"""The bodies of POST /admin/api-keys and DELETE /admin/api-keys/:id (docs/reference/access.md,
Key administration), as request body models (config.bodymodels)."""

from typing import Annotated

from pydantic import Field

from config.bodymodels import BodyModel
from config.bodyrules import Choice, Items, Text
from config.scopes import ALL_SCOPES
from keys.models import CUSTOMER_ID_HELP, CUSTOMER_ID_PATTERN, Tier

DESCRIPTION_MAX = 500
REASON_MAX = 500


class ApiKeyCreateInput(BodyModel):
    customer_id: Annotated[
        str,
        Text(
            64,
            pattern=CUSTOMER_ID_PATTERN.removeprefix("^").removesuffix("$"),
            pattern_help=CUSTOMER_ID_HELP,
        ),
    ]
    tier: Annotated[str, Choice(tuple(Tier.values))]
    description: Annotated[str, Text(DESCRIPTION_MAX, allow_blank=True)] = ""
    is_admin: bool = False
    scopes: Annotated[
        list[Annotated[str, Choice(ALL_SCOPES)]],
        Items(1, len(ALL_SCOPES)),
        Field(description="What the key may do (docs/reference/access.md, Key scopes); default all three"),
    ] = list(ALL_SCOPES)


class ApiKeyRevokeInput(BodyModel):
    reason: Annotated[
        str,
        Text(REASON_MAX, allow_blank=True),
        Field(description="Why the key is revoked (kept in the admin audit log)"),
    ] = ""
