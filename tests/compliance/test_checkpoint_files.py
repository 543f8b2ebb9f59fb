"""The checkpoint an auditor carries: each report PDF embeds the signed note and the verifier key as
PDF/A-3 associated files, and the offline verifier reads them from the PDF itself; a copy of the
printed note that lost its blank line is refused with that reason (not as a forgery); a file of
`null` (no checkpoint at a date) reads "no checkpoint at that date"; the verifier needs only the
standard library and `cryptography`, and says what to install when `cryptography` is missing
(docs/reference/reports.md, "How to verify a report"; docs/reference/checkpoints.md)."""

import io
import json
import os
import subprocess
import sys
import textwrap

import pytest
from pypdf import PdfReader

from tests.audit.test_checkpoint_tamper import REPO, offline
from tests.compliance.helpers import export_file, seed

pytestmark = pytest.mark.django_db


def _report_and_export(api, tmp_path, template="eu_ai_act"):
    seed(api, 6)
    made = api.post("/v1/audit-trail/checkpoints").json()
    _, content = export_file(api, template=template, format="pdf")
    (tmp_path / "report.pdf").write_bytes(content)
    (tmp_path / "export.ndjson").write_bytes(b"".join(api.get("/v1/audit-trail/export").streaming_content))
    return made, content


@pytest.mark.parametrize("template", ["eu_ai_act", "texas_traiga"])
def test_the_pdf_embeds_the_note_and_the_key_and_the_verifier_reads_them_from_it(api, tmp_path, template):
    made, content = _report_and_export(api, tmp_path, template)
    attachments = PdfReader(io.BytesIO(content)).attachments  # an independent PDF reader
    key = api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"]
    assert attachments["checkpoint-note.txt"] == [made["note"].encode()]
    assert attachments["verifier-key.txt"] == [(key + "\n").encode()]
    pdf, export = str(tmp_path / "report.pdf"), str(tmp_path / "export.ndjson")
    code, out = offline("--key", pdf, "--checkpoint", pdf, export)
    assert code == 0, out
    assert f"OK: the tree of the export matches the checkpoint of {made['sequence']} entries" in out


def test_the_printed_note_copied_without_its_blank_line_is_refused_with_that_reason(api, tmp_path):
    made, _ = _report_and_export(api, tmp_path)
    lines = made["note"].splitlines()
    (tmp_path / "copied.txt").write_text("\n".join(line for line in lines if line) + "\n")
    code, out = offline(
        "--key",
        str(tmp_path / "report.pdf"),
        "--checkpoint",
        str(tmp_path / "copied.txt"),
        str(tmp_path / "export.ndjson"),
    )
    assert code == 1 and "Traceback" not in out, out
    assert "is not a well-formed signed note, so no signature was checked" in out
    assert "no blank line between the text and the signature lines" in out
    assert "NOT signed" not in out
    # An indented signature line (as some text extractions give it) is refused likewise, with its reason.
    (tmp_path / "indented.txt").write_text(made["note"].replace("\n\u2014 ", "\n  \u2014 "))
    code, out = offline(
        "--key",
        str(tmp_path / "report.pdf"),
        "--checkpoint",
        str(tmp_path / "indented.txt"),
        str(tmp_path / "export.ndjson"),
    )
    assert code == 1 and "signature line 1 does not start with an em dash" in out, out


def test_null_is_no_checkpoint_at_that_date_in_both_modes(api, tmp_path):
    made, _ = _report_and_export(api, tmp_path)
    (tmp_path / "old.json").write_text("null\n")  # jq '.data[0]' of an empty page
    (tmp_path / "new.json").write_text(json.dumps(made))
    (tmp_path / "proof.json").write_text(json.dumps({"first": 1, "second": 6, "hashes": []}))
    key = str(tmp_path / "report.pdf")
    for args in (
        ["--key", key, "--checkpoint", str(tmp_path / "old.json"), str(tmp_path / "export.ndjson")],
        [
            "--key",
            key,
            "--consistency",
            str(tmp_path / "old.json"),
            str(tmp_path / "new.json"),
            "--proof",
            str(tmp_path / "proof.json"),
        ],
    ):
        code, out = offline(*args)
        assert code == 2 and "Traceback" not in out, out
        assert "old.json: no checkpoint at that date" in out and "malformed" not in out


def test_a_report_of_an_empty_chain_embeds_the_key_and_says_it_has_no_checkpoint(api, tmp_path):
    _, content = export_file(api, template="eu_ai_act", format="pdf")
    (tmp_path / "report.pdf").write_bytes(content)
    (tmp_path / "export.ndjson").write_bytes(b"")
    assert set(PdfReader(io.BytesIO(content)).attachments) == {"verifier-key.txt"}
    pdf = str(tmp_path / "report.pdf")
    code, out = offline("--key", pdf, "--checkpoint", pdf, str(tmp_path / "export.ndjson"))
    assert code == 2 and "report.pdf embeds no checkpoint" in out, out


# A fresh interpreter whose imports are limited to the standard library, the repository's audit
# package and, unless refused, cryptography: the auditor's machine.
LIMITED = textwrap.dedent(
    """
    import importlib.abc, runpy, sys
    allowed = set(sys.stdlib_module_names) | {"audit"} | ({"cryptography", "_cffi_backend"} if sys.argv[1] == "yes" else set())
    class Only(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] not in allowed:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, Only())
    sys.argv = ["offline_verify", *sys.argv[2:]]
    runpy.run_module("audit.offline_verify", run_name="__main__", alter_sys=True)
    """
)


def _limited(cryptography: bool, *args: str) -> tuple[int, str]:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, "yes" if cryptography else "no", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_verifier_runs_on_the_standard_library_and_cryptography_alone(api, tmp_path):
    _report_and_export(api, tmp_path)
    pdf, export = str(tmp_path / "report.pdf"), str(tmp_path / "export.ndjson")
    code, out = _limited(True, "--key", pdf, "--checkpoint", pdf, export)
    assert code == 0 and "OK: 6 entries" in out, out
    _, content = export_file(api, template="eu_ai_act", format="json")
    (tmp_path / "report.json").write_bytes(content)
    code, out = _limited(False, "--report", str(tmp_path / "report.json"), export)  # no signature to check
    assert code == 0 and "Traceback" not in out, out


def test_without_cryptography_it_says_what_to_install_and_shows_no_traceback(api, tmp_path):
    _report_and_export(api, tmp_path)
    pdf, export = str(tmp_path / "report.pdf"), str(tmp_path / "export.ndjson")
    code, out = _limited(False, "--key", pdf, "--checkpoint", pdf, export)
    assert code == 2 and "Traceback" not in out, out
    assert "needs the Python package `cryptography`" in out and "-m pip install cryptography" in out
