"""The bodies of POST /webhooks and PATCH /webhooks/:id (docs/reference/webhooks.md), as request
body models (config.bodymodels). `url` and `events` are taken as any JSON and judged by the
service, so that a wrong value answers WEBHOOK_INVALID_URL or WEBHOOK_INVALID_EVENT rather than
a generic VALIDATION_ERROR."""

from typing import Annotated

from pydantic import Field, JsonValue, WithJsonSchema

from config.bodymodels import BodyModel
from config.bodyrules import text
from webhooks.validation import SUBSCRIBABLE

DESCRIPTION_MAX = 500
URL_SCHEMA = {"type": "string", "format": "uri", "maxLength": 2048}
EVENTS_SCHEMA = {"type": "array", "minItems": 1, "items": {"type": "string", "enum": SUBSCRIBABLE}}
URL_HELP = (
    "The receiving HTTPS endpoint; it must resolve to public addresses only (docs/reference/webhooks.md)."
)
EVENTS_HELP = "Event names, or `*` for all."

Url = Annotated[JsonValue, WithJsonSchema(URL_SCHEMA), Field(description=URL_HELP)]
Events = Annotated[JsonValue, WithJsonSchema(EVENTS_SCHEMA), Field(description=EVENTS_HELP)]


class WebhookCreateInput(BodyModel):
    nulls_kept = frozenset({"url", "events"})
    url: Url
    events: Events
    description: Annotated[str, text(DESCRIPTION_MAX, blank=True)] = ""


class WebhookUpdateInput(BodyModel):
    """Only the fields sent change."""

    partial = True
    url: Url = None
    events: Events = None
    description: Annotated[str | None, text(DESCRIPTION_MAX, blank=True)] = None
