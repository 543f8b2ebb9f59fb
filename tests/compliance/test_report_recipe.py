"""The PDF's "How to verify this report" (Appendix C; docs/reference/reports.md, "How to verify a
report"), followed literally: every input the steps need is read from the rendered PDF's text,
applied to the json export of the same request, and must reach the printed digest. And the
checkpoint the report prints covers the head it cites (docs/reference/checkpoints.md, "Reports")."""

import hashlib
import io
import json
import re
from typing import Any

import pytest
from pypdf import PdfReader

from tests.compliance.helpers import at, export_file, render, seed

pytestmark = pytest.mark.django_db

LOG_SECTION = {"eu_ai_act": "audit_trail", "texas_traiga": "monitoring_and_safeguards"}


def _squeezed(content: bytes) -> str:
    """The PDF's text with every white space removed: lines wrap at spaces, so a value printed
    across two lines reads whole again (the values the recipe prints hold no spaces of their own)."""
    return "".join(
        "".join((page.extract_text() or "").split()) for page in PdfReader(io.BytesIO(content)).pages
    )


def _appendix_c(text: str) -> str:
    start = text.rindex("AppendixC.Howtoverifythisreport")
    return text[start : text.index("AppendixD.Attestation", start)]


def _printed_recipe(pdf: bytes) -> dict[str, Any]:
    step = _appendix_c(_squeezed(pdf))
    digest = re.search(r"ItsSHA-256is([0-9a-f]{64})\.", step)
    body = re.search(r"POST/v1/exportwiththebody(\{.*?\}),anddownload", step)
    members = re.search(r"\(steps2and3checkthem\):(.*?)\.(?:[a-z]\.)?Replacethemember", step)
    replace = re.search(r"Replacethemember([\w.]+)\(thewholedecisionlog\)by(\{.*?\}):", step)
    assert digest and body and members and replace, step[:1500]
    return {
        "digest": digest.group(1),
        "request": json.loads(body.group(1)),
        "delete": members.group(1).split(","),
        "replace": (replace.group(1), json.loads(replace.group(2))),
    }


def _follow(api, recipe: dict[str, Any]) -> str:
    """Steps 1a to 1d as printed."""
    _, content = export_file(api, **recipe["request"])
    data = json.loads(content)
    for path in recipe["delete"]:
        *parents, last = path.split(".")
        holder = data
        for part in parents:
            holder = holder[part]
        del holder[last]
    path, stand_in = recipe["replace"]
    *parents, last = path.split(".")
    holder = data
    for part in parents:
        holder = holder[part]
    assert isinstance(holder[last], list)  # the whole decision log is what is replaced
    holder[last] = stand_in
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
@pytest.mark.parametrize("with_decisions", [True, False], ids=["with-decisions", "no-decision"])
def test_following_the_printed_recipe_on_the_json_reaches_the_printed_digest(api, template, with_decisions):
    seed(api, 12, overtrust=2)
    period = (
        {"from": at(10)[:10], "to": at(0)[:10]}
        if with_decisions
        else {"from": at(60)[:10], "to": at(40)[:10]}
    )
    filters = {"user_ids": ["ana", "ben"]} if with_decisions else {}
    _, pdf = export_file(api, template=template, format="pdf", time_period=period, filters=filters)
    seed(api, 3, start=100, timestamp=at(90))  # the chain grows after the report, not the period
    recipe = _printed_recipe(pdf)
    assert recipe["request"] == {
        "template": template,
        "format": "json",
        "time_period": period,
        "filters": filters,
    }
    assert _follow(api, recipe) == recipe["digest"]
    # The stand-in's csv_sha256 is the csv format's sha256, as step 1c says.
    csv_job, csv = export_file(api, **{**recipe["request"], "format": "csv"})
    stand_in = recipe["replace"][1]
    assert stand_in["csv_sha256"] == csv_job["sha256"] == hashlib.sha256(csv).hexdigest()
    assert stand_in["decisions"] == (len(csv.decode().splitlines()) - 1)
    assert (stand_in["decisions"] > 0) is with_decisions


def test_a_decision_added_to_the_period_changes_the_recomputed_digest(api):
    seed(api, 6)
    _, pdf = export_file(api, template="eu_ai_act", format="pdf")
    recipe = _printed_recipe(pdf)
    seed(api, 1, start=500)  # one more decision of the period
    assert _follow(api, recipe) != recipe["digest"]


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_a_report_signs_a_checkpoint_at_the_head_it_cites_and_prints_it(api, template):
    seed(api, 4)
    first = api.post("/v1/audit-trail/checkpoints").json()
    seed(api, 3, start=10, timestamp=at(90))  # the chain grew since the last checkpoint
    _, content = export_file(api, template=template, format="json")
    section = json.loads(content)["sections"][LOG_SECTION[template]]
    checkpoint, chain = section["checkpoint"], section["chain_verification"]
    assert chain["entries_checked"] == 7
    assert checkpoint["sequence"] == 7 and checkpoint["head_hash"] == chain["head_hash"]
    assert checkpoint["checkpoint_id"] != first["checkpoint_id"]
    listed = api.get("/v1/audit-trail/checkpoints").json()["data"]
    assert [c["sequence"] for c in listed] == [7, 4]
    # A second report with no entry since signs nothing new and prints the same checkpoint.
    job, pdf = export_file(api, template=template, format="pdf")
    assert [c["sequence"] for c in api.get("/v1/audit-trail/checkpoints").json()["data"]] == [7, 4]
    text = _squeezed(pdf)
    assert "".join(checkpoint["note"].split()) in text
    step = _appendix_c(text)
    assert (
        f"Checkpoint{checkpoint['checkpoint_id']}coversentries1to7,thechain'sheadwhenthisreportwasgenerated"
        in step
    )
    assert job["status"] == "completed"


def test_a_report_of_an_empty_chain_signs_nothing(api):
    job = render(
        api,
        api.post("/v1/export", {"template": "eu_ai_act", "format": "json"}, format="json").json()[
            "export_id"
        ],
    )
    assert job["status"] == "completed"
    assert api.get("/v1/audit-trail/checkpoints").json()["data"] == []
