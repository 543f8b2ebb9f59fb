"""The names a signature uses for a JSON document (docs/architecture.md, Typing).

The rule for this module: `JSONObject` is a JSON object whose members are read by name by code that
knows its shape (an event's data, an engine's figures, a stored finding, a report's section), and
`JSONValue` any one JSON value. Both are `Any` underneath, said here once: a recursive JSON union
would need an isinstance at every read of a member whose type the reader already knows. A document
whose members are fixed is better a TypedDict (as `oversight.rules`' rows are)."""

from typing import Any

# Any: a JSON value whose type its reader knows (module rule above)
JSONValue = Any
# Any: a JSON object's members, read by name (module rule above)
JSONObject = dict[str, Any]
