"""JSON text from an encoder's C core made once (docs/architecture.md, "The set-wise batch path"):
json.JSONEncoder.encode builds that object, two closures and a dictionary of the containers
seen on every call, a microsecond or two of a text's few; a batch writes several per item."""

import json
from collections.abc import Callable
from typing import Any


# Any: a JSON value of any shape
def one_shot(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """encoder.encode, the same text, with the C encoder made once and without the dictionary of
    containers seen, so a circular value (never one read from JSON) fails by RecursionError
    instead of ValueError."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None or encoder.indent is not None:
        return encoder.encode
    escape = json.encoder.encode_basestring_ascii if encoder.ensure_ascii else json.encoder.encode_basestring
    chunks = make(
        None,
        encoder.default,
        escape,
        encoder.indent,
        encoder.key_separator,
        encoder.item_separator,
        encoder.sort_keys,
        encoder.skipkeys,
        encoder.allow_nan,
    )
    join = "".join

    # Any: a JSON value of any shape
    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    return encode
