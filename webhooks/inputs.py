"""The bodies of POST /webhooks and PATCH /webhooks/:id (docs/reference/webhooks.md), declared
once (config.bodies). `url` and `events` are taken as any JSON and judged by the service, so that
a wrong value answers WEBHOOK_INVALID_URL or WEBHOOK_INVALID_EVENT rather than a generic
VALIDATION_ERROR."""

from config.bodies import Body, Field
from webhooks.services import SUBSCRIBABLE

DESCRIPTION_MAX = 500
URL_SCHEMA = {"type": "string", "format": "uri", "maxLength": 2048}
EVENTS_SCHEMA = {"type": "array", "minItems": 1, "items": {"type": "string", "enum": SUBSCRIBABLE}}


def _fields(*, required: bool) -> tuple[Field, ...]:
    return (
        Field(
            "url",
            "any",
            required=required,
            schema=URL_SCHEMA,
            help="The receiving HTTPS endpoint; it must resolve to public addresses only "
            "(docs/reference/webhooks.md).",
        ),
        Field("events", "any", required=required, schema=EVENTS_SCHEMA, help="Event names, or `*` for all."),
        Field("description", max_length=DESCRIPTION_MAX, allow_blank=True, default="" if required else None),
    )


WEBHOOK_CREATE = Body("WebhookCreateInput", _fields(required=True))
WEBHOOK_UPDATE = Body("WebhookUpdateInput", _fields(required=False), doc="Only the fields sent change.")
