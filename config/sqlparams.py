"""The values a raw SQL statement's parameters take: what the database drivers adapt (the
union django-stubs gives `cursor.execute`), one name for the selectors' and services' raw SQL."""

import datetime as dt
from decimal import Decimal
from typing import Any
from uuid import UUID

# Any: an array parameter's items, each adapted by the driver as a value of this union
SQLValue = (
    bool
    | int
    | float
    | Decimal
    | str
    | bytes
    | dt.date
    | dt.datetime
    | UUID
    | tuple[Any, ...]
    | list[Any]
    | None
)
