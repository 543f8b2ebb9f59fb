"""The canonical texts (audit.hashing) and the JSON of the bulk rows (config.db.rows) are written by
a C encoder made once: for any JSON value the text is json's own, byte for byte, so no stored
hash or fingerprint can change with it (docs/reference/erasure.md, "Entry format 2")."""

import json

import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from audit.hashing import canonical_json, jcs
from config.db.rows import json_value

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6))
def test_the_texts_are_json_s_own(doc):
    assert canonical_json(doc) == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert json_value(doc) == ("{}" if doc == {} else json.dumps(doc))


# Keys of the Basic Multilingual Plane and members json writes as RFC 8785 does (audit.hashing._plain).
PLAIN = st.dictionaries(
    st.text(alphabet=st.characters(max_codepoint=0xD7FF)),
    st.none()
    | st.booleans()
    | st.text()
    | st.dictionaries(
        st.text(alphabet=st.characters(max_codepoint=0xD7FF), max_size=3), st.text(), max_size=3
    ),
    max_size=8,
)


@given(PLAIN)
def test_a_plain_document_s_canonical_text_is_json_s_own(doc):
    assert jcs(doc) == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Plain documents with the numbers _plain lets through: floats written alike by json and RFC 8785
# (and by orjson, which writes the service's texts: below 1e-4 it would write 0.00001 for 1e-05).
PLAIN_NUMBERS = st.dictionaries(
    st.text(alphabet=st.characters(max_codepoint=0xD7FF), max_size=4),
    st.floats(min_value=1e-4, max_value=1e15).filter(lambda x: not x.is_integer())
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.text(),
    max_size=8,
)


@given(PLAIN_NUMBERS)
def test_a_plain_document_with_numbers_is_written_as_json_writes_it(doc):
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert jcs(doc) == text
    assert canonical_json(doc) == text


def test_the_numbers_json_writes_otherwise_keep_json_s_text():
    doc = {"small": 1e-05, "tiny": 5e-324, "whole": 2.0, "big": 1e16, "negative_zero": -0.0, "huge": 2**64}
    assert canonical_json(doc) == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_a_string_with_an_unpaired_surrogate_keeps_json_s_text():
    doc = {"context": "half \ud800 a pair", "user_id": "é"}
    assert jcs(doc) == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Any JSON document the chain can hold: keys and strings of any code point but a lone
# surrogate (the input layer refuses those), integers within RFC 8785's range, every finite double.
_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
_SPEC_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
SPEC_DOCUMENTS = st.recursive(
    _SPEC_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=5),
    max_leaves=25,
)


@given(SPEC_DOCUMENTS)
def test_the_canonical_text_is_the_specification_s(doc):
    """audit.hashing.jcs against the rfc8785 package, the specification the format promises."""
    assert jcs(doc) == rfc8785.dumps(doc).decode("utf-8")
