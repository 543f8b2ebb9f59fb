"""config.jsondoc's two names, for the modules the offline verifier runs: it imports nothing
outside the audit package and the standard library (docs/reference/checkpoints.md), so they
cannot import config. The same aliases, for the same reason (config/jsondoc.py)."""

from typing import Any

# Any: a JSON value whose type its reader knows (config/jsondoc.py)
JSONValue = Any
# Any: a JSON object's members, read by name (config/jsondoc.py)
JSONObject = dict[str, Any]
