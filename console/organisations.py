"""The organisation picker of the console's pages: one decision count everywhere, the real
decisions with the vigilance probes named apart (the figures beside it never count probes).
A staff user who is not a superuser is offered their own organisations only, and a page asked
for another organisation answers 404 (docs/reference/access.md, "Staff and their
organisations")."""

from django.http import Http404, HttpRequest

from audit import platform as audit_platform
from config.admin_scope import organisation_allowed, organisation_ids
from keys.models import Customer


def organisation_choices(request: HttpRequest, *, limit: int) -> list[tuple[str, str]]:
    """(customer id, label), busiest first: "demo-bank (3,300 decisions, and 66 vigilance probes)"."""
    busiest = audit_platform.platform_customers_by_decisions(
        limit=limit, customer_ids=organisation_ids(request)
    )
    probes = audit_platform.platform_probe_counts([customer_id for customer_id, _ in busiest])
    choices = []
    for customer_id, logged in busiest:
        probed = probes.get(customer_id, 0)
        label = f"{customer_id} ({logged - probed:,} decisions"
        choices.append((customer_id, label + (f", and {probed:,} vigilance probes)" if probed else ")")))
    return choices


def organisation_picked(request: HttpRequest, choices: list[tuple[str, str]]) -> Customer | None:
    """The organisation of `?customer=` (else the first choice); 404 for one the user may not see."""
    wanted = request.GET.get("customer") or (choices[0][0] if choices else None)
    if not wanted:
        return None
    if not organisation_allowed(request, wanted):
        raise Http404("No such organisation among yours.")
    return Customer.objects.filter(pk=wanted).first()
