"""An erased subject's values appear nowhere (docs/reference/erasure.md): not in API answers,
the NDJSON export, stored events, any page of the staff console, nor any table of the database
(the subgroup statistics, which count groups and not people, keep a group's name)."""

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from tests.audit.erasure_helpers import (
    CONTEXT,
    GROUP,
    STATISTICS,
    SUBJECT,
    dump,
    export,
    found,
    subject_erased,
)
from tests.audit.factories import all_entries
from tests.console.crawl import console_pages
from tests.console.test_admin_site import login

pytestmark = pytest.mark.django_db


def test_an_erased_subject_leaves_no_trace(api, tmp_path):
    subject_erased(api, tmp_path)
    texts = [
        json.dumps(all_entries(api)),
        Path(export(api, tmp_path)).read_text(encoding="utf-8"),
        dump(leave_out=(STATISTICS,)),
        *(
            html
            for _, html in console_pages(login(User.objects.create_superuser("root", "r@example.com", "pw")))
        ),
    ]
    assert found("\n".join(texts), SUBJECT, CONTEXT, GROUP) == []
