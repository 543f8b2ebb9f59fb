"""The offline verifier on inputs it cannot read (docs/reference/checkpoints.md, "Verification
by an auditor, offline"): invalid UTF-8, 200,000-deep nesting, a 5,000-digit integer, a bad
--key file, a checkpoint file holding {"note": 5}: each gets one clear sentence and exit status
2 ("could not read"), never a traceback; an entry that reads but does not match exits 1."""

import json

import pytest

from tests.audit.factories import decision_body
from tests.audit.test_checkpoint_tamper import offline

pytestmark = pytest.mark.django_db


@pytest.fixture
def kept(api, tmp_path):
    """A trail of two entries, its checkpoint, the key and the export, as an auditor keeps them."""
    api.post("/v1/log/batch", {"decisions": [decision_body(), decision_body()]}, format="json")
    (tmp_path / "checkpoint.json").write_text(json.dumps(api.post("/v1/audit-trail/checkpoints").json()))
    (tmp_path / "key.txt").write_text(api.get("/v1/audit-trail/checkpoint-key").json()["verifier_key"])
    export = b"".join(api.get("/v1/audit-trail/export").streaming_content)
    (tmp_path / "export.ndjson").write_bytes(export)
    return tmp_path, export.splitlines()


def _run(tmp_path, *, key="key.txt", checkpoint="checkpoint.json", export="export.ndjson"):
    return offline(
        "--key", str(tmp_path / key), "--checkpoint", str(tmp_path / checkpoint), str(tmp_path / export)
    )


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"sequence": 1, "note": "\xff\xfe"}', "not UTF-8"),
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (b'{"sequence": ' + b"9" * 5000 + b"}", "not readable JSON"),
    ],
    ids=["invalid-utf8", "deep", "5000-digits"],
)
def test_an_export_line_that_cannot_be_read_is_named_with_status_2(kept, line, said):
    tmp_path, lines = kept
    (tmp_path / "bad.ndjson").write_bytes(lines[0] + b"\n" + line + b"\n")
    code, out = _run(tmp_path, export="bad.ndjson")
    assert code == 2 and "Traceback" not in out, out
    assert "CANNOT VERIFY: line 2 of the export is" in out and said in out


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("key-bytes.txt", b"\xff\xfe\x00"),
        ("key-deep.json", b"{" + b'"a":{' * 100_000 + b"}" * 100_001),
        ("key-number.json", b'{"verifier_key": 5}'),
        ("key-text.txt", b"not a key"),
    ],
)
def test_a_bad_key_file_is_named_with_status_2(kept, name, content):
    tmp_path, _ = kept
    (tmp_path / name).write_bytes(content)
    code, out = _run(tmp_path, key=name)
    assert code == 2 and "Traceback" not in out and "CANNOT VERIFY: the verifier key" in out, out


@pytest.mark.parametrize("content", [b'{"note": 5}', b'[{"note": null}]', b'{"data": [' * 50_000])
def test_a_checkpoint_file_without_a_note_is_named_with_status_2(kept, content):
    tmp_path, _ = kept
    (tmp_path / "odd.json").write_bytes(content)
    code, out = _run(tmp_path, checkpoint="odd.json")
    assert code == 2 and "Traceback" not in out and "odd.json" in out, out


def test_a_line_that_reads_but_is_no_entry_fails_the_check_with_status_1(kept):
    tmp_path, lines = kept
    (tmp_path / "odd.ndjson").write_bytes(lines[0] + b'\n{"sequence": 2, "format": 2, "canonical": 5}\n')
    code, out = _run(tmp_path, export="odd.ndjson")
    assert code == 1 and "Traceback" not in out and "FAILED at line 2" in out, out
