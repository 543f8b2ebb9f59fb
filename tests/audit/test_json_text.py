"""The canonical texts (audit.hashing) and the JSON of the bulk rows (config.bulk) are written by
a C encoder made once: for any JSON value the text is json's own, byte for byte, so no stored
hash or fingerprint can change with it (docs/reference/erasure.md, "Entry format 2")."""

import json

from hypothesis import given
from hypothesis import strategies as st

from audit.hashing import canonical_json, jcs
from config.bulk import _json_value

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
    assert _json_value(doc) == ("{}" if doc == {} else json.dumps(doc))


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
