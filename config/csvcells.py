"""Spreadsheet formula injection (docs/reference/limits.md, "CSV cells"): a text cell that
begins with `=`, `+`, `-`, `@`, a tab or a carriage return is written with a leading `'`, so
that a spreadsheet shows it as text instead of running it as a formula. One rule for every CSV
the service writes, in Python and in SQL (PostgreSQL's COPY)."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# The same rule as a SQL expression over one text column (PostgreSQL and SQLite both have
# substr and ||); NULL stays NULL.
SQL_TEMPLATE = (
    "CASE WHEN substr(%(expressions)s, 1, 1) IN ('=', '+', '-', '@', chr(9), chr(13)) "
    "THEN '''' || %(expressions)s ELSE %(expressions)s END"
)


def cell[T](value: T) -> T | str:
    """A text value made safe for a spreadsheet; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
