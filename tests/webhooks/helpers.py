from keys.models import Customer
from webhooks import services
from webhooks.models import Webhook


def customer(name: str = "acme") -> Customer:
    return Customer.objects.get_or_create(id=name)[0]


def webhook(url: str, events: list[str] | None = None, name: str = "acme") -> tuple[Webhook, str]:
    issued = services.webhook_create(customer=customer(name), url=url, events=events or ["*"])
    return issued.webhook, issued.secret


def emit(type: str = "bias.detected", name: str = "acme", **data):
    return services.event_emit(customer=customer(name), type=type, data=data or {"decision_id": "dec_1"})
