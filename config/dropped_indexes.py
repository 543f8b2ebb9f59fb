"""Indexes that migrations drop where another index serves every read of the column: a
customer key's own index (and, on PostgreSQL, its `varchar_pattern_ops` twin for LIKE) on a
table whose unique or composite indexes lead with `customer_id`, and the twin Django makes for a
text primary key that no query matches with LIKE. Every row a batch writes (or every version of
a row it updates, where the update is not heap-only) then writes fewer index entries. Used by
the apps' migrations; going back makes each index again. Later migrations make them again
(indexes_made): 10 alternating pairs of a 1,000-item batch showed no gain beyond the noise
(bench/README.md, "Performance code earns its place")."""

from collections.abc import Callable, Sequence

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

# (table, index name, its columns as CREATE INDEX takes them, PostgreSQL only)
type Index = tuple[str, str, str, bool]


def customer_indexes(table: str, name: str) -> list[Index]:
    """The index Django named `name` for the table's customer key, and its LIKE twin."""
    return [
        (table, name, "customer_id", False),
        (table, f"{name}_like", "customer_id varchar_pattern_ops", True),
    ]


def customer_key_unindexed(model_name: str, related_name: str) -> migrations.AlterField:
    """The state's side: the model's customer key (on delete CASCADE) without an index."""
    field = models.ForeignKey(
        db_index=False, on_delete=models.CASCADE, related_name=related_name, to="keys.customer"
    )
    return migrations.AlterField(model_name=model_name, name="customer", field=field)


def like_twin(table: str, name: str) -> Index:
    """The LIKE twin Django made for a text primary key (`name` ends in `_like`)."""
    return (table, name, "id varchar_pattern_ops", True)


def _step(indexes: Sequence[Index], *, make: bool) -> Callable[[StateApps, BaseDatabaseSchemaEditor], None]:
    """RunPython's code that makes `indexes` (or, without `make`, drops them)."""

    def each(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        postgresql = schema_editor.connection.vendor == "postgresql"
        for table, name, columns, postgresql_only in indexes:
            if postgresql_only and not postgresql:
                continue
            if make:
                # An index built beforehand under this name (CREATE INDEX CONCURRENTLY, which
                # leaves the table writable: docs/deploy.md, Each role) is left as it is.
                schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns})")
            else:
                schema_editor.execute(f"DROP INDEX IF EXISTS {name}")

    return each


def indexes_dropped(indexes: Sequence[Index]) -> migrations.RunPython:
    """The operation that drops `indexes` (and, reversed, makes them again)."""
    return migrations.RunPython(_step(indexes, make=False), _step(indexes, make=True))


def indexes_made(indexes: Sequence[Index]) -> migrations.RunPython:
    """The operation that makes `indexes` again (and, reversed, drops them): indexes_dropped undone."""
    return migrations.RunPython(_step(indexes, make=True), _step(indexes, make=False))
