"""Entries already stored keep their hashes: their canonical texts are written again, byte for
byte, by today's encoder (docs/reference/erasure.md, Entry format 2). `data/stored_entries.json`
holds entries as the service stored and showed them (format 2) and older format-1 entries with
their hashes; a change to the canonical JSON that would break an existing chain fails here."""

import itertools
import json
from pathlib import Path

import pytest

from audit.hashing import canonical_hash, commitment, entry_hash, jcs, strict_loads

STORED = json.loads((Path(__file__).parent / "data" / "stored_entries.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", STORED["format2"], ids=lambda e: f"format2-{e['sequence']}")
def test_a_stored_format_2_entry_s_canonical_text_is_written_again_byte_for_byte(entry):
    canonical = entry["canonical"]
    assert canonical_hash(canonical) == entry["hash"]
    inner = strict_loads(canonical)
    assert jcs(inner) == canonical
    committed = commitment(bytes.fromhex(entry["salt"]), entry["personal_fields"])
    assert committed == inner["personal"]


@pytest.mark.parametrize("doc", STORED["format1"], ids=lambda d: f"format1-{d['sequence']}")
def test_a_stored_format_1_entry_s_hash_is_computed_again(doc):
    assert entry_hash(doc) == doc["hash"]


def test_the_stored_entries_chain():
    docs = STORED["format1"]
    assert all(later["previous_hash"] == earlier["hash"] for earlier, later in itertools.pairwise(docs))
    entries = STORED["format2"]
    for earlier, later in itertools.pairwise(entries):
        assert strict_loads(later["canonical"])["previous_hash"] == earlier["hash"]
