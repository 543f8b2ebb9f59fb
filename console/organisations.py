"""The organisation picker of the console's pages: one decision count everywhere, the real
decisions with the vigilance probes named apart (the figures beside it never count probes)."""

from audit import platform as audit_platform


def organisation_choices(*, limit: int) -> list[tuple[str, str]]:
    """(customer id, label), busiest first: "demo-bank (3,300 decisions, and 66 vigilance probes)"."""
    busiest = audit_platform.platform_customers_by_decisions(limit=limit)
    probes = audit_platform.platform_probe_counts([customer_id for customer_id, _ in busiest])
    choices = []
    for customer_id, logged in busiest:
        probed = probes.get(customer_id, 0)
        label = f"{customer_id} ({logged - probed:,} decisions"
        choices.append((customer_id, label + (f", and {probed:,} vigilance probes)" if probed else ")")))
    return choices
