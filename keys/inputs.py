"""The bodies of POST /admin/api-keys and DELETE /admin/api-keys/:id (docs/reference/access.md,
Key administration), as request body models (config.bodymodels)."""

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from config.bodymodels import BodyModel
from config.bodyrules import text
from config.scopes import ALL_SCOPES
from keys.models import CUSTOMER_ID_HELP, CUSTOMER_ID_PATTERN, Tier

DESCRIPTION_MAX = 500
REASON_MAX = 500


class ApiKeyCreateInput(BodyModel):
    # The customer id's pattern refuses "." and ".." by a lookahead: Python's engine.
    model_config = ConfigDict(regex_engine="python-re")
    customer_id: Annotated[
        str,
        text(64, pattern=CUSTOMER_ID_PATTERN, help=CUSTOMER_ID_HELP),
    ]
    tier: Literal[tuple(Tier.values)]  # type: ignore[valid-type]  # the tiers
    description: Annotated[str, text(DESCRIPTION_MAX, blank=True)] = ""
    is_admin: bool = False
    scopes: Annotated[
        list[Literal[ALL_SCOPES]],  # type: ignore[valid-type]  # the scopes
        Field(min_length=1, max_length=len(ALL_SCOPES)),
        Field(description="What the key may do (docs/reference/access.md, Key scopes); default all three"),
    ] = list(ALL_SCOPES)


class ApiKeyRevokeInput(BodyModel):
    reason: Annotated[
        str,
        text(REASON_MAX, blank=True),
        Field(description="Why the key is revoked (kept in the admin audit log)"),
    ] = ""
