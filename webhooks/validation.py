"""The rules a webhook's URL and event list meet at create and update (the API and the admin
alike): docs/reference/webhooks.md, "URL safety" and "Subscriptions"."""

from webhooks import url_safety
from webhooks.events import EVENT_TYPES
from webhooks.exceptions import WebhookInvalidEvent, WebhookInvalidUrl

SUBSCRIBABLE = [*EVENT_TYPES, "*"]


def webhook_url_validate(url: object) -> str:
    """The URL rule at create/update (docs/reference/webhooks.md, "URL safety"): https (unless insecure URLs are allowed), and the host must not
    resolve to a loopback, private, link-local, multicast, reserved or unspecified address."""
    if not isinstance(url, str):
        raise WebhookInvalidUrl("url must be a string.")
    try:
        url_safety.resolve(url.strip(), rules=url_safety.url_rules())
    except url_safety.UnsafeUrl as exc:
        raise WebhookInvalidUrl(str(exc))
    return url.strip()


def webhook_events_validate(events: object) -> list[str]:
    if not isinstance(events, list) or not events:
        raise WebhookInvalidEvent("events must be a non-empty array of event names.")
    unknown = [e for e in events if not isinstance(e, str) or e not in SUBSCRIBABLE]
    if unknown:
        raise WebhookInvalidEvent(
            f"Unknown event name(s): {', '.join(map(str, unknown[:5]))}. Known: {', '.join(SUBSCRIBABLE)}."
        )
    return list(dict.fromkeys(events))
