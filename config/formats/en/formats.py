"""Dates and times as the staff console prints them (settings.FORMAT_MODULE_PATH): ISO order and
always the zone, so "Nov. 25, 2026, 11:40 p.m." reads "2026-11-25 23:40 UTC" on every page."""

DATETIME_FORMAT = "Y-m-d H:i T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i T"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
