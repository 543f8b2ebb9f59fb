from rest_framework.parsers import JSONParser


class StrictJSONParser(JSONParser):
    """JSON only; a body that is not valid JSON raises ParseError (-> INVALID_JSON)."""

    media_type = "application/json"
