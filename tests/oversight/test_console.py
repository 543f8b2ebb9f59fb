"""The console's Oversight pages (docs/reference/oversight.md, "Who sees what"): compliance
staff see the team's figures and flagged counts, never a row per reviewer; members of the
"oversight per-person figures" group (created by a migration) see the rows too."""

import pytest
from django.contrib.auth.models import Group

from console.permissions import COMPLIANCE_STAFF
from oversight.permissions import PER_PERSON_GROUP
from tests.oversight.helpers import decision, log_all, probe, staff_client

pytestmark = pytest.mark.django_db

PAGES = ["/admin/console/review-effort/", "/admin/console/vigilance/"]


@pytest.fixture
def seeded(api):
    items = [decision("carol-careful", seconds=60.0) for _ in range(40)]
    items += [decision("rick-rubber", seconds=1.0) for _ in range(30)]
    items += [probe("rick-rubber", "known_wrong", followed=True) for _ in range(6)]
    items += [probe("carol-careful", "known_wrong", followed=False) for _ in range(6)]
    items += [probe("carol-careful", "known_right", followed=True) for _ in range(3)]
    log_all(api, items)


def test_the_per_person_group_exists_with_its_permission_and_compliance_staff_lacks_it():
    group = Group.objects.get(name=PER_PERSON_GROUP)
    assert [p.codename for p in group.permissions.all()] == ["view_reviewer_figures"]
    staff = Group.objects.get(name=COMPLIANCE_STAFF)
    codenames = set(
        staff.permissions.filter(content_type__app_label="oversight").values_list("codename", flat=True)
    )
    assert codenames == {"view_team_figures"}


def test_an_officer_sees_team_figures_and_the_flag_count_but_no_reviewer(seeded):
    officer = staff_client("olivia", COMPLIANCE_STAFF)
    index = officer.get("/admin/").content.decode()
    assert "Oversight" in index
    for url in PAGES:
        page = officer.get(url)
        assert page.status_code == 200
        html = page.content.decode()
        assert 'id="oversight-meaning"' in html and 'id="team-figures"' in html
        assert 'id="per-person-withheld"' in html
        assert "rick-rubber" not in html and "carol-careful" not in html
    html = officer.get(PAGES[0]).content.decode()
    assert '<th>Flagged reviewers</th><td class="tc-num"><strong>1</strong>' in html
    html = officer.get(PAGES[1]).content.decode()
    assert "<strong>6</strong> of 12" in html


def test_a_member_of_the_per_person_group_sees_the_rows(seeded):
    lead = staff_client("lena", COMPLIANCE_STAFF, PER_PERSON_GROUP)
    html = lead.get(PAGES[0]).content.decode()
    assert 'id="per-person-withheld"' not in html
    assert html.index("rick-rubber") < html.index("carol-careful")  # flagged first
    assert "flagged</span>" in html
    html = lead.get(PAGES[1]).content.decode()
    assert html.index("rick-rubber") < html.index("carol-careful")  # lowest catch rate first


def test_staff_without_oversight_permission_cannot_open_the_pages(seeded):
    nobody = staff_client("nick")
    for url in PAGES:
        assert nobody.get(url).status_code == 403
