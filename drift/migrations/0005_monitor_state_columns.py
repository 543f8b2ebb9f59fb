"""A monitor's ChartState moves from a JSON column to typed columns (drift.wire.state_of): the
write path reads and saves them without decoding or encoding JSON text."""

import datetime as dt

from django.db import migrations, models

_RUN = ("start_index", "points", "first_sequence", "last_sequence", "decision_time_from", "decision_time_to",
        "excess", "misses")  # fmt: skip
_COLUMNS = ("run_start_index", "run_points", "run_first_sequence", "run_last_sequence", "run_time_from",
            "run_time_to", "run_excess", "run_misses")  # fmt: skip
_TIMES = ("decision_time_from", "decision_time_to")


def _state_to_columns(apps, schema_editor):
    monitor_model = apps.get_model("drift", "DriftMonitor")
    for monitor in monitor_model.objects.exclude(state={}).iterator():
        state = monitor.state
        monitor.chart_points = state["points"]
        monitor.chart_statistic = state["statistic"]
        monitor.chart_restart = state["restart"]
        monitor.chart_open_alarm = state["open_alarm"]
        run = state.get("run") or {}
        for key, column in zip(_RUN, _COLUMNS, strict=True):
            value = run.get(key)
            if value is not None and key in _TIMES:
                value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            setattr(monitor, column, value)
        monitor.save(
            update_fields=["chart_points", "chart_statistic", "chart_restart", "chart_open_alarm", *_COLUMNS]
        )


def _columns_to_state(apps, schema_editor):
    monitor_model = apps.get_model("drift", "DriftMonitor")
    for monitor in monitor_model.objects.iterator():
        run = None
        if monitor.run_start_index is not None:
            run = {key: getattr(monitor, column) for key, column in zip(_RUN, _COLUMNS, strict=True)}
            for key in _TIMES:
                run[key] = run[key].isoformat().replace("+00:00", "Z")
        monitor.state = {"points": monitor.chart_points, "statistic": monitor.chart_statistic,
                         "restart": monitor.chart_restart, "open_alarm": monitor.chart_open_alarm, "run": run}  # fmt: skip
        monitor.save(update_fields=["state"])


class Migration(migrations.Migration):
    dependencies = [
        ("drift", "0004_monitor_calibration_lease"),
    ]

    operations = [
        migrations.AddField(
            model_name="driftmonitor",
            name="chart_open_alarm",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="chart_points",
            field=models.IntegerField(default=0),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="chart_restart",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="chart_statistic",
            field=models.FloatField(default=0.0),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_excess",
            field=models.FloatField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_first_sequence",
            field=models.BigIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_last_sequence",
            field=models.BigIntegerField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_misses",
            field=models.IntegerField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_points",
            field=models.IntegerField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_start_index",
            field=models.IntegerField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_time_from",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="driftmonitor",
            name="run_time_to",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(_state_to_columns, _columns_to_state),
        migrations.RemoveField(
            model_name="driftmonitor",
            name="state",
        ),
    ]
