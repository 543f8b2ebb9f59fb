"""JSON text by a json.JSONEncoder built once (json.dumps builds one per call). Kept for
config.db.rows until it writes with json's public API itself; nothing else uses it."""

import json
from collections.abc import Callable
from typing import Any


# Any: a JSON value of any shape
def one_shot(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """encoder.encode: json's own text through its public API."""
    return encoder.encode
