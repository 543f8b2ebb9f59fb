"""Console lists print counts as the rest of the console does, with thousands separators ("1,000",
never Django's bare "1000"): the audit trail's sequences, the chains' sizes and decision counts,
the calibration days' counts, the number of rows a list holds; and a percentage the one way the console and the reports print it
("76.1%", never "76.1 %")."""

import re
from html import unescape

import pytest
from django.contrib.auth.models import User

from tests.console.test_admin_site import ANALYSIS, login
from tests.fairness.factories import AlertFactory
from tests.oversight.helpers import decision, log_all, probe

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


@pytest.fixture
def thousand(api):
    # One reviewer, one day: 1,000 decisions in one calibration row, entries 1 to 1,000 (and the probes after).
    log_all(api, [decision("carol", seconds=60.0) for _ in range(1000)] + [probe("carol", "known_wrong", followed=False) for _ in range(4)])  # fmt: skip


@pytest.fixture
def root():
    return login(User.objects.create_superuser("root", "root@example.com", "pw"))


def test_list_columns_print_counts_with_separators(root, thousand):
    entries = _text(root.get("/admin/audit/auditentry/?o=-1").content.decode())
    assert re.search(r"\b1,00\d acme\b", entries) and not re.search(r"\b100\d acme\b", entries)
    assert re.search(r"\b1,00\d audit entries\b", entries), "the list's own count too"
    chains = _text(root.get("/admin/audit/chainhead/").content.decode())
    assert re.search(r"acme 1,0\d\d 1,00\d\b", chains), chains[:3000]
    days = _text(root.get("/admin/calibration/userdailyaggregate/").content.decode())
    assert re.search(r"\b1,000 1,000\b", days), days[:3000]  # decisions, and all of them followed the AI
    assert not re.search(r"\b1000\b", days)


def test_percentages_read_the_same_on_every_console_page(root, thousand):
    alert = AlertFactory(severity="critical", analysis=ANALYSIS)
    pages = [
        "/admin/",
        "/admin/console/review-effort/",
        "/admin/console/vigilance/",
        f"/admin/fairness/amplificationalert/{alert.pk}/change/",
    ]
    for url in pages:
        text = _text(root.get(url).content.decode())
        assert re.search(r"\d\.\d%", text), url
        spaced = [text[max(0, m.start() - 40) : m.end() + 5] for m in re.finditer(r"\d[ \u00a0]%", text)]
        assert not spaced, (url, spaced)
