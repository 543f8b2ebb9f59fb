"""How bulk writes read a model instance's row (config.db.bulk): every column's value from the
instance in one call, and the few values that need preparing for PostgreSQL (JSON text, a
field's own get_db_prep_save, a COPY's timestamps as text) prepared in place."""

import datetime as dt
import functools
import json
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import connection, models

from config.jsondoc import JSONValue

if TYPE_CHECKING:
    AnyField = models.Field[Any, Any]  # Any: a field of any column type
else:
    AnyField = models.Field  # not subscriptable at run time


# Any: a row holds the columns' values, of mixed types
def copy_row_of(model: type[models.Model], fields: list[AnyField]) -> Callable[[models.Model], list[Any]]:
    """How bulk_insert's COPY reads an object's row (row_of), its timestamps written as text."""
    return row_of(fields, {**preparers(model), **dict.fromkeys(_datetime_names(model), _times_written())})


@functools.cache
def _datetime_names(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(
        field.attname for field in model._meta.concrete_fields if type(field) is models.DateTimeField
    )


# Any: a column's value, an aware datetime written as text, anything else as it is
def _times_written() -> Callable[[Any], Any]:
    """A COPY's timestamps as their ISO 8601 text, each distinct value written once: psycopg's
    own dumper of an aware datetime cost several microseconds a value, most of a COPY row's
    formatting, where a batch's rows share their logged_at and mostly their timestamp. The
    server reads the same instant from the text (its offset included; two equal instants of
    different offsets share one text, the same timestamptz); a naive value goes to psycopg as
    before."""
    written: dict[dt.datetime, str] = {}

    def text(value: Any) -> Any:  # Any: a column's value
        if type(value) is not dt.datetime or value.tzinfo is None:
            return value
        found = written.get(value)
        if found is None:
            found = written[value] = value.isoformat()
        return found

    return text


# Any: a row holds the columns' values, of mixed types; a preparer takes and gives one
def row_of(fields: list[AnyField], prepare: dict[str, Any]) -> Callable[[models.Model], list[Any]]:
    """How an object's row is read: every column's value from the instance's __dict__ in one
    call (an itemgetter: a comprehension over the columns cost a 1,000-row batch several
    milliseconds per table), then the few values that need preparing (JSON text, a field's
    own get_db_prep_save) prepared in place."""
    names = [field.attname for field in fields]
    get = operator.itemgetter(*names)
    fixes = [(at, prepare[name]) for at, name in enumerate(names) if prepare[name] is not None]
    single = len(names) == 1  # itemgetter of one name gives the value, not a tuple

    def row(obj: models.Model) -> list[Any]:  # Any: the columns' values
        values = [get(obj.__dict__)] if single else list(get(obj.__dict__))
        for at, fn in fixes:
            values[at] = fn(values[at])
        return values

    return row


# JSONField's own text (json.dumps's defaults) by json's public API, its encoder made once
_JSON = json.JSONEncoder().encode


# a JSON field's value, and its JSON text (or None)
def json_value(value: JSONValue) -> JSONValue:
    if value is None:
        return None
    return "{}" if value == {} and type(value) is dict else _JSON(value)  # metadata is mostly empty


# Any: a preparer (None, or a function from a value to the value sent)
@functools.cache
def preparers(model: type[models.Model]) -> dict[str, Any]:
    """How each concrete field's value goes to PostgreSQL in bulk_insert: as it is (None), as
    JSON text, or through the field's own get_db_prep_save. The plain types (text, numbers,
    booleans, aware datetimes, dates, bytes) go as they are, as get_db_prep_save would pass them:
    calling it for every value of a 1,000-row batch cost more than the COPY itself."""
    plain = (
        models.CharField,
        models.TextField,
        models.IntegerField,
        models.SmallIntegerField,
        models.PositiveSmallIntegerField,
        models.PositiveIntegerField,
        models.BigIntegerField,
        models.FloatField,
        models.BooleanField,
        models.DateTimeField,
        models.DateField,
        models.ForeignKey,
        models.AutoField,
        models.BigAutoField,
        models.BinaryField,  # bytes: psycopg writes them as bytea (Django wrapped each in Binary)
    )
    prepare: dict[str, Any] = {}
    for field in model._meta.concrete_fields:
        if isinstance(field, models.JSONField) and field.encoder is None:
            prepare[field.attname] = json_value
        elif type(field) in plain or (
            isinstance(field, models.ForeignKey) and type(field.target_field) in plain
        ):
            prepare[field.attname] = None
        else:
            prepare[field.attname] = functools.partial(_prep_save, field)
    return prepare


# Any: a column's value, before and after its field prepares it
def _prep_save(field: AnyField, value: Any) -> Any:
    return field.get_db_prep_save(value, connection)
