"""The weekly sums of the calibration aggregates, kept by the database (docs/architecture.md,
Calibration aggregates): a trigger on the daily table adds every change of a daily row to the
row of its ISO week, in the same statement's transaction, on PostgreSQL and on SQLite alike.

A daily row inserted adds its columns to its week; an update adds the new values and takes
away the old ones (an erasure that re-keys a reviewer moves the row's sums from one week row to
another; on PostgreSQL an update that keeps the row's keys and week does both in one
statement); a delete takes them away. A week row whose decision count falls to 0 is removed.
The SQL is generated from a column list given by the migration that installs it, so a later
change of the columns installs the trigger again from its own migration."""

DAILY = "calibration_userdailyaggregate"
WEEKLY = "calibration_userweeklyaggregate"
KEYS = ["customer_id", "user_id", "model_key"]
FUNCTION = "calibration_weekly_fold"


def _week(vendor: str, row: str) -> str:
    if vendor == "postgresql":
        return f"date_trunc('week', {row}.day)::date"
    return f"date({row}.day, 'weekday 0', '-6 days')"  # the Sunday ending the week, less 6 days


def _add(vendor: str, columns: list[str]) -> str:
    """Add NEW's columns to its week's row (made when missing)."""
    names = ", ".join([*KEYS, "week", *columns])
    values = ", ".join([*(f"NEW.{k}" for k in KEYS), _week(vendor, "NEW"), *(f"NEW.{c}" for c in columns)])
    updates = ", ".join(f"{c} = {WEEKLY}.{c} + excluded.{c}" for c in columns)
    keys = ", ".join([*KEYS, "week"])
    return (
        f"INSERT INTO {WEEKLY} ({names}) VALUES ({values}) "  # noqa: S608 (fixed names)
        f"ON CONFLICT ({keys}) DO UPDATE SET {updates};"
    )


def _take(vendor: str, columns: list[str]) -> str:
    """Take OLD's columns from its week's row, and remove the row when no decision is left. Only
    an existing row is changed: when the week row is gone already (a flush that empties the weekly
    table before the daily one), nothing is made."""
    match = " AND ".join([*(f"{k} = OLD.{k}" for k in KEYS), f"week = {_week(vendor, 'OLD')}"])
    updates = ", ".join(f"{c} = {c} - OLD.{c}" for c in columns)
    return (
        f"UPDATE {WEEKLY} SET {updates} WHERE {match}; "  # noqa: S608 (fixed names)
        f"DELETE FROM {WEEKLY} WHERE {match} AND n = 0;"
    )


def _move(columns: list[str]) -> str:
    """PostgreSQL: an update that keeps the daily row's keys and week (every additive upsert)
    in one statement on its week's row instead of the take and the add (three statements and
    two new versions of the row), with the same result to the bit: the week's values less
    OLD's plus NEW's, evaluated left to right as the take then the add computed them, or
    NEW's alone where the take would have left no decision and removed the row (the add then
    made it again from NEW). With no week row NEW's values make it, as the add did.

    The statement is an INSERT ... ON CONFLICT on the week's unique key, not an UPDATE with a
    WHERE clause: the conflict is found through the unique index whatever the statistics say,
    where the UPDATE's plan (cached by PL/pgSQL) on a table never analysed took the index of
    (customer, model, week) and read the week's row of every reviewer of that model to keep
    one (200 rows a firing, 400 firings a 1,000-item batch)."""
    updates = ", ".join(
        f"{c} = CASE WHEN {WEEKLY}.n = OLD.n THEN excluded.{c} ELSE {WEEKLY}.{c} - OLD.{c} + excluded.{c} END"
        for c in columns
    )
    same = " AND ".join(
        [
            *(f"NEW.{k} = OLD.{k}" for k in KEYS),
            f"{_week('postgresql', 'NEW')} = {_week('postgresql', 'OLD')}",
        ]
    )
    names = ", ".join([*KEYS, "week", *columns])
    values = ", ".join(
        [*(f"NEW.{k}" for k in KEYS), _week("postgresql", "NEW"), *(f"NEW.{c}" for c in columns)]
    )
    keys = ", ".join([*KEYS, "week"])
    return (
        f"IF TG_OP = 'UPDATE' AND {same} THEN "  # noqa: S608 (fixed names)
        f"INSERT INTO {WEEKLY} ({names}) VALUES ({values}) ON CONFLICT ({keys}) DO UPDATE SET {updates}; "
        "RETURN NULL; END IF; "
    )


def install_sql(vendor: str, columns: list[str]) -> list[str]:
    """The statements that (re)install the trigger for `columns`."""
    if vendor == "postgresql":
        body = (
            "BEGIN "
            f"{_move(columns)}"
            f"IF TG_OP IN ('UPDATE', 'DELETE') THEN {_take(vendor, columns)} END IF; "
            f"IF TG_OP IN ('INSERT', 'UPDATE') THEN {_add(vendor, columns)} END IF; "
            "RETURN NULL; END;"
        )
        return [
            f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ {body} $$",
            f"DROP TRIGGER IF EXISTS {FUNCTION} ON {DAILY}",
            f"CREATE TRIGGER {FUNCTION} AFTER INSERT OR UPDATE OR DELETE ON {DAILY} "
            f"FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()",
        ]
    statements = []
    take, add = _take(vendor, columns), _add(vendor, columns)
    for event, body in (("INSERT", add), ("UPDATE", f"{take} {add}"), ("DELETE", take)):
        name = f"{FUNCTION}_{event.lower()}"
        statements += [
            f"DROP TRIGGER IF EXISTS {name}",
            f"CREATE TRIGGER {name} AFTER {event} ON {DAILY} FOR EACH ROW BEGIN {body} END",
        ]
    return statements


def uninstall_sql(vendor: str) -> list[str]:
    if vendor == "postgresql":
        return [f"DROP TRIGGER IF EXISTS {FUNCTION} ON {DAILY}", f"DROP FUNCTION IF EXISTS {FUNCTION}()"]
    return [f"DROP TRIGGER IF EXISTS {FUNCTION}_{event}" for event in ("insert", "update", "delete")]


def backfill_sql(vendor: str, columns: list[str]) -> str:
    """Every week row from the daily rows already stored."""
    week = _week(vendor, DAILY)
    names = ", ".join([*KEYS, "week", *columns])
    sums = ", ".join(f"SUM({c})" for c in columns)
    keys = ", ".join(KEYS)
    return (
        f"INSERT INTO {WEEKLY} ({names}) SELECT {keys}, {week}, {sums} FROM {DAILY} "  # noqa: S608 (fixed names)
        f"GROUP BY {keys}, {week} HAVING SUM(n) > 0"
    )
