"""`python3 -m audit.offline_verify --report` on genuine data: the four reports of `seed_demo` (both
months, both templates, in the json format) re-derive from the audit-trail export alone, vigilance
probes left out and counted, every reviewer's figures too: exit status 0 and "all N figures match";
one changed figure, or one changed decision in the export, exits 1 with a last line that names what
differs (docs/reference/reports.md, "How to verify a report", step 5)."""

import datetime as dt
import io
import json
import re

import pytest
from django.core.management import call_command

from console import demo_data
from tests.audit.test_checkpoint_tamper import offline
from tests.compliance.helpers import export_file
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo_files(tmp_path):
    call_command("seed_demo", stdout=io.StringIO())
    api = client_for(make_key("demo-bank").value)
    older, recent = demo_data.months(dt.datetime.now(dt.UTC))
    reports = {}
    for template in ("eu_ai_act", "texas_traiga"):
        for name, (first, last) in (("older", older), ("recent", recent)):
            period = {"from": str(first), "to": str(last)}
            _, content = export_file(api, template=template, format="json", time_period=period)
            path = tmp_path / f"{template}-{name}.json"
            path.write_bytes(content)
            reports[f"{template}-{name}"] = path
    export = tmp_path / "export.ndjson"
    export.write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    return reports, export


def _last(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_the_demos_four_reports_re_derive_from_the_export_and_any_change_is_named(demo_files, tmp_path):
    reports, export = demo_files
    for name, report in reports.items():
        code, out = offline("--report", str(report), str(export))
        assert code == 0, (name, out[-3000:])
        assert re.fullmatch(r"all \d{3,} figures match", _last(out)), (name, _last(out))
        probes = re.search(r"^(\d+) vigilance probe\(s\) of the window were left out", out, re.M)
        assert probes and int(probes.group(1)) > 0, name
        assert ".users[officer-" in out, "every reviewer's figures are re-derived"
    # One changed figure of a reviewer in the Texas report: exit 1, the figure named.
    data = json.loads(reports["texas_traiga-recent"].read_text())
    user = data["sections"]["monitoring_and_safeguards"]["users"][0]
    user["trust_score"] += 0.001
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data))
    code, out = offline("--report", str(changed), str(export))
    assert code == 1, out[-2000:]
    assert _last(out) == f"1 figures differ: monitoring_and_safeguards.users[{user['user_id']}].trust_score"
    # One changed decision in the export (a reviewer's decision turned): exit 1, what it moves named.
    lines = export.read_text().splitlines()
    recent_start = str(demo_data.months(dt.datetime.now(dt.UTC))[1][0])
    number, entry = next(
        (i, doc)
        for i, doc in enumerate(map(json.loads, lines))
        if doc.get("type") == "decision"
        and doc.get("probe") is None
        and doc.get("followed_ai") is True
        and doc["timestamp"] >= recent_start
    )
    other = "approve" if entry["user_decision"] == "deny" else "deny"
    lines[number] = json.dumps({**entry, "user_decision": other})
    edited = tmp_path / "edited.ndjson"
    edited.write_text("\n".join(lines) + "\n")
    code, out = offline("--report", str(reports["eu_ai_act-recent"]), str(edited))
    assert code == 1, out[-2000:]
    last = _last(out)
    assert re.match(r"\d+ figures differ: ", last), last
    assert (
        "executive_summary.human_override_rate" in last
        and f".users[{entry['user_id']}].override_rate" in last
    )
