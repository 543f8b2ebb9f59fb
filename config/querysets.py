"""The list filters of every selector: a queryset narrowed by the filters a caller gave.

For selectors that take optional filters from other callers (decision sets, report evidence):
the values arrive already validated (list endpoints filter with django-filter FilterSets,
config/filters.py), and each selector names its lookups."""

from django.db.models import Model, QuerySet


def _given(value: object) -> bool:
    """None, an empty string and an empty list mean "not given"; False and 0 are values."""
    if value is None:
        return False
    return not (isinstance(value, str | list | tuple | set) and not value)


def narrowed[M: Model](qs: QuerySet[M], **lookups: object) -> QuerySet[M]:
    """`qs` filtered by every lookup whose value was given (see _given)."""
    given = {lookup: value for lookup, value in lookups.items() if _given(value)}
    return qs.filter(**given) if given else qs
