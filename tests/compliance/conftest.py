import datetime as dt
import io
from typing import Any

import pytest
from django.core.management import call_command
from weasyprint import HTML

from compliance.evidence import Scope
from compliance.pdf import report_html
from compliance.report import report_build
from console import demo_data
from keys.models import Customer
from tests.webhooks.conftest import insecure, receiver  # noqa: F401  (real loopback receivers)

# The four demo reports: both templates, both months.
DOCUMENTS = [f"{t}-{m}" for t in ("eu_ai_act", "texas_traiga") for m in ("older", "recent")]


def _scope(customer: Customer, first: dt.date, last: dt.date) -> Scope:
    start = dt.datetime.combine(first, dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    return Scope(customer=customer, start=start, end=end, time_period={"from": str(first), "to": str(last)})


@pytest.fixture(scope="session")
def demo_documents(django_db_setup, django_db_blocker) -> dict[str, tuple[str, Any]]:
    """The demo's four reports (`DOCUMENTS`) as HTML and as WeasyPrint lays them out for the PDF:
    seeded, built, rendered and the database emptied again before the first test that asks, once
    per worker for test_report_layout.py and test_report_text.py (one xdist group keeps both on one
    worker). About a minute of seeding and layout."""
    with django_db_blocker.unblock():
        call_command("seed_demo", stdout=io.StringIO())
        try:
            customer = Customer.objects.get(pk=demo_data.CUSTOMER)
            older, recent = demo_data.months(dt.datetime.now(dt.UTC))
            out = {}
            for template in ("eu_ai_act", "texas_traiga"):
                for name, month in (("older", older), ("recent", recent)):
                    html = report_html(report_build(scope=_scope(customer, *month), template=template))
                    out[f"{template}-{name}"] = (html, HTML(string=html).render())
        finally:
            call_command("flush", interactive=False, verbosity=0)
    return out
