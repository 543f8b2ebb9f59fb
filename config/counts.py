"""Counting rows per value of one column, every expected value present (0 when none)."""

from collections.abc import Iterable

from django.db.models import Count, QuerySet


def counts_by(qs: QuerySet, field: str, values: Iterable[str]) -> dict[str, int]:
    counts = dict.fromkeys(values, 0)
    for row in qs.values(field).annotate(n=Count("pk")).order_by():
        counts[row[field]] = row["n"]
    return counts
