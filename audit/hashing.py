"""The hash rules of the audit chain, with no Django: the service and the offline verifier
(audit/offline_verify.py) hash an entry with these functions and read exported lines with
`strict_loads` (docs/reference/erasure.md, "Entry format 2").

Format 1 (older entries): hash = SHA-256 of previous_hash followed by the sorted-keys JSON of
the entry's shown fields. Format 2: the entry's RFC 8785 (JCS) canonical JSON holds the fields
that are not personal in clear and, instead of the personal ones, `personal`, the
HMAC-SHA256 keyed by the entry's own random 32-byte salt over the JCS of its personal fields;
hash = SHA-256 of the canonical text, which the service stores as written."""

import hashlib
import hmac
import itertools
import json
import math

from audit.jsondoc import JSONObject, JSONValue

try:  # a dependency of the service; the offline verifier runs without it (json's encoder then)
    import orjson
except ImportError:  # pragma: no cover - the verifier on an auditor's machine
    orjson = None  # type: ignore[assignment]

# The personal fields of a decision (docs/reference/erasure.md, "What is personal").
PERSONAL_FIELDS = ("context", "subgroups", "subject_id", "user_id")
SALT_BYTES = 32
_SAFE_INT = 2**53 - 1
# Floats both writers give the same digits for, without an exponent (see _plain).
_FLOAT_LOW, _FLOAT_HIGH = 1e-4, 1e16


# a JSON value of any shape
def _plain(value: JSONValue) -> bool:
    """Whether json.dumps(sort_keys) writes the value exactly as RFC 8785 does: strings,
    booleans, null, integers within 2**53, floats written the same way by both (not integral,
    from 1e-4 up to 1e16: Python's repr and ECMAScript's both give the shortest round-trip
    digits there, without an exponent), and keys of the Basic Multilingual Plane (their UTF-16
    order, which RFC 8785 sorts by, is then their code point order)."""
    kind = type(value)  # the exact JSON types first: a batch checks a thousand entries
    if kind is str or value is None or kind is bool:
        return True
    if kind is dict:
        return _plain_members(value)
    if isinstance(value, str | bool):
        return True
    if isinstance(value, int):
        return -_SAFE_INT <= value <= _SAFE_INT
    if isinstance(value, float):
        magnitude = abs(value)
        return math.isfinite(value) and _FLOAT_LOW <= magnitude < _FLOAT_HIGH and not value.is_integer()
    if isinstance(value, dict):
        return all(max(key, default="\0") < "\ud800" and _plain(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_plain(item) for item in value)
    return False


_SCALARS = frozenset((str, bool, type(None)))


# a JSON object's members of any shape
def _plain_members(value: JSONObject) -> bool:
    """_plain of an object: its keys, and its members, a scalar judged here without a call of
    its own (an entry's document is a score of scalars). The keys are judged joined, in one
    call, when they are all ASCII (as an entry's are); the members of the plain scalar types
    are passed over without a look at the others."""
    if not "".join(value).isascii() and not all(max(key, default="\0") < "\ud800" for key in value):
        return False
    for item in value.values():
        kind = type(item)
        if kind in _SCALARS:
            continue
        if kind is float:
            if not (_FLOAT_LOW <= abs(item) < _FLOAT_HIGH and not item.is_integer()):  # also refuses inf, nan
                return False
        elif not _plain(item):
            return False
    return True


# The two texts' encoders, built once (json.dumps builds one per call): format 1's canonical JSON
# is json's own text; a _plain value's is also RFC 8785's.
_CANONICAL_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


# a JSON value of any shape, _plain
def _plain_text(value: JSONValue) -> str:
    """json.dumps(sort_keys, compact, non-ASCII kept)'s text of a _plain value, by orjson where
    it writes the same bytes: every plain value (the same escapes, key order and numbers; its
    floats differ from Python's repr only below 1e-4, which _plain refuses), several times
    faster than json's C encoder on an entry's document (a batch writes three such texts per
    decision). A string holding an unpaired surrogate, which orjson refuses and json writes as
    it is, goes to json's encoder."""
    if orjson is None:
        return _CANONICAL_ENCODER.encode(value)
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    except orjson.JSONEncodeError:
        return _CANONICAL_ENCODER.encode(value)


# a JSON value of any shape
def jcs(value: JSONValue) -> str:
    """The RFC 8785 canonical JSON of a value: the `rfc8785` package's (the specification's
    reference), or the one fast path where it writes the same text (_plain), which is most
    entries (tests/audit/test_json_text.py holds the two to the same text). Where the package
    is not installed (an auditor's machine: the offline verifier needs only the standard
    library and `cryptography`), standard_jcs writes it."""
    if _plain(value):
        return _plain_text(value)
    try:
        import rfc8785  # only for the values json.dumps would write otherwise
    except ImportError:
        return standard_jcs(value)
    return rfc8785.dumps(value).decode("utf-8")


def es_number(value: float) -> str:
    """A number as RFC 8785 writes it (ECMAScript's Number::toString): the shortest digits that
    read back as the same double (Python's repr finds them), placed without an exponent from
    1e-6 up to under 1e21, else as d.ddde+N."""
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a JSON number")
    if value == 0:
        return "0"
    if value < 0:
        return "-" + es_number(-value)
    mantissa, _, power = repr(float(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + int(power or 0) - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        return digits + "0" * (point - count)
    if 0 < point <= 21:
        return digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    exponent = point - 1
    return (
        digits[0]
        + ("." + digits[1:] if count > 1 else "")
        + "e"
        + ("+" if exponent >= 0 else "-")
        + str(abs(exponent))
    )


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _es_string(text: str) -> str:
    text.encode("utf-8")  # an unpaired surrogate is not JSON text: UnicodeEncodeError (a ValueError)
    escaped = "".join(_ESCAPES.get(ch) or (f"\\u{ord(ch):04x}" if ch < " " else ch) for ch in text)
    return f'"{escaped}"'


# a JSON value of any shape
def standard_jcs(value: JSONValue) -> str:
    """RFC 8785 with the standard library alone: members sorted by their keys' UTF-16 code
    units, strings with the minimal escapes, numbers by es_number, integers within 2**53."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        if not -_SAFE_INT <= value <= _SAFE_INT:
            raise ValueError(f"{value} exceeds the integers a JSON number holds exactly")
        return str(value)
    if isinstance(value, float):
        return es_number(value)
    if isinstance(value, str):
        return _es_string(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(standard_jcs(item) for item in value) + "]"
    if isinstance(value, dict):
        members = sorted(value.items(), key=lambda member: member[0].encode("utf-16-be"))
        return "{" + ",".join(_es_string(key) + ":" + standard_jcs(item) for key, item in members) + "}"
    raise ValueError(f"{type(value).__name__} is not a JSON value")


# the personal fields by name: JSON values of several types
def commitment(salt: bytes, personal: JSONObject) -> str:
    """`personal`: hex HMAC-SHA256 keyed by the salt over the JCS of the personal fields."""
    return hmac.digest(salt, jcs(personal).encode("utf-8"), "sha256").hex()  # hmac.new's, one call


def canonical_hash(canonical: str) -> str:
    """A format-2 entry's hash: SHA-256 of its canonical text."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_PERSONAL_KEYS = frozenset(PERSONAL_FIELDS)
# A format-2 entry on the wire carries these beside its canonical fields (GET /audit-trail).
WIRE_ONLY = frozenset({"hash", "canonical", "personal_fields", "salt", "erased", *PERSONAL_FIELDS})


# a JSON document by name (an entry, a report), whose members are read as found
def format2_problem(doc: JSONObject) -> str | None:
    """What is wrong with a format-2 entry as shown (None when nothing): its hash is the SHA-256
    of its `canonical`, every field it shows in clear is the canonical's, and its personal
    fields (unless erased) match the commitment. Returns "erased" for an intact erased entry."""
    canonical = doc.get("canonical")
    if not isinstance(canonical, str) or canonical_hash(canonical) != doc.get("hash"):
        return "its canonical text does not match its hash"
    inner = strict_loads(canonical)
    if not isinstance(inner, dict) or inner.get("format") != 2:
        return "its canonical text is not a format-2 entry"
    problem = _clear_fields_problem(doc, inner)
    if problem or "personal" not in inner:
        return problem  # no personal part: an erasure entry
    if doc.get("erased") is True:
        return _erased_problem(doc)
    return _personal_problem(doc, str(inner["personal"]))


# a JSON document by name (an entry, a report), whose members are read as found
def _clear_fields_problem(doc: JSONObject, inner: JSONObject) -> str | None:
    """The fields shown in clear are exactly the canonical's (the personal part aside)."""
    for key, value in doc.items():
        if key in WIRE_ONLY:
            continue
        if key not in inner:
            return f"its {key} is not the one its hash covers"
        held = inner[key]
        if (type(held) is not type(value) or held != value) and not same_value(held, value):
            return f"its {key} is not the one its hash covers"  # (same type and equal: same_value's answer, without the call)
    for key in inner:
        if key != "personal" and key not in doc:
            return f"it does not show {key}, which its hash covers"
    return None


# a JSON document by name (an entry, a report), whose members are read as found
def _erased_problem(doc: JSONObject) -> str:
    """ "erased" for an intact erased entry: no personal field left anywhere."""
    if doc.get("personal_fields") is not None or doc.get("salt") is not None:
        return "it is marked erased but still carries personal fields"
    shown = [doc.get(name) for name in PERSONAL_FIELDS if doc.get(name) is not None]
    return "erased" if not shown else "it is marked erased but shows a personal field"


# a JSON document by name (an entry, a report), whose members are read as found
def _personal_problem(doc: JSONObject, committed: str) -> str | None:
    """The personal fields match the entry's commitment, and those shown in clear are theirs."""
    personal, salt = doc.get("personal_fields"), doc.get("salt")
    if not isinstance(personal, dict) or personal.keys() != _PERSONAL_KEYS or not isinstance(salt, str):
        return "its personal fields are missing"
    try:
        salt_bytes = bytes.fromhex(salt)
    except ValueError:
        return "its salt is not hex"
    if not hmac.compare_digest(commitment(salt_bytes, personal), committed):
        return "its personal fields do not match their commitment (one was changed)"
    for name in PERSONAL_FIELDS:
        if name not in doc:
            continue
        shown, held = doc[name], personal[name]
        if (type(shown) is not type(held) or shown != held) and not same_value(shown, held):
            return f"its {name} is not the one its commitment covers"
    return None


# a JSON value of any shape
def same_value(a: JSONValue, b: JSONValue) -> bool:
    """Equal JSON values: a number equals a number of the same value (JCS writes 1.0 as 1),
    but a boolean is never a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b and (type(a) is type(b) or (isinstance(a, int | float) and isinstance(b, int | float)))


# a JSON document by name (an entry, a report), whose members are read as found
def canonical_json(doc: JSONObject) -> str:
    """Keys sorted, separators `,` and `:`, no whitespace, non-ASCII kept as is."""
    return _plain_text(doc) if _plain(doc) else _CANONICAL_ENCODER.encode(doc)


# a JSON document by name (an entry, a report), whose members are read as found
def entry_hash(doc: JSONObject) -> str:
    """SHA-256 of previous_hash followed by the canonical JSON of the entry without `hash`."""
    body = {k: v for k, v in doc.items() if k != "hash"}
    return hashlib.sha256((doc["previous_hash"] + canonical_json(body)).encode("utf-8")).hexdigest()


# Number fields of a format-1 entry that a client could once send as `-0.0`: such an entry was
# hashed with `-0.0` while the database gives 0.0 back (docs/reference/checkpoints.md, "Negative
# zero in older entries").
ZERO_SIGNED_FIELDS = ("ai_confidence", "review_seconds")


# a JSON document by name (an entry, a report), whose members are read as found
def entry_hash_matches(doc: JSONObject) -> bool:
    """The entry's `hash` is the hash of its content; for an entry whose zero number fields may
    have been hashed as `-0.0`, each such way of writing them is tried (only after the plain
    one failed, so an intact entry costs one hash)."""
    expected = doc.get("hash")
    if not isinstance(expected, str):
        return False
    if entry_hash(doc) == expected:
        return True
    zeros = [name for name in ZERO_SIGNED_FIELDS if isinstance(doc.get(name), float) and doc[name] == 0.0]
    for count in range(1, len(zeros) + 1):
        for names in itertools.combinations(zeros, count):
            if entry_hash({**doc, **dict.fromkeys(names, -0.0)}) == expected:
                return True
    return False


class DuplicateKey(ValueError):
    """An object of the line names a key twice."""


# a JSON value of any shape
def _unique_keys(pairs: list[tuple[str, JSONValue]]) -> JSONObject:
    value = dict(pairs)
    if len(value) != len(pairs):
        keys = [key for key, _ in pairs]
        raise DuplicateKey(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


# a JSON value of any shape
def strict_loads(text: str) -> JSONValue:
    """A JSON document read as the service reads one: a key given twice in an object raises
    DuplicateKey (which of the two a reader takes is not defined, so the line fails)."""
    return _DECODER.decode(text)
