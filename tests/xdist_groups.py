"""`--dist loadgroup` under pytest 9: keep each `xdist_group` on one worker.

pytest-xdist (3.8, the newest) names a test's group by writing `item._nodeid = "<nodeid>@<group>"`;
pytest 9 reads a node's id from `item._id`, so the suffix was lost and every group was silently
split across the workers (the multi-process tests of the `processes` group ran side by side, and a
module fixture of a group ran on both). `apply_xdist_groups` sets the id pytest reads from the one
xdist wrote; it changes nothing when xdist wrote no group or pytest already reads it.
tests/system/test_xdist_groups.py runs a grouped module on two workers and checks it stays whole.
"""

import pytest


def apply_xdist_groups(items: list[pytest.Item]) -> None:
    for item in items:
        grouped = item.__dict__.get("_nodeid")
        if isinstance(grouped, str) and grouped != item.nodeid:
            item._id = type(item._id).parse(grouped)
