"""`make run` (and every start) says when HarfBuzz-Subset is missing (docs/deploy.md, "What every
start checks", trustcal.W003): reports still render without it, more slowly and with a fontTools
warning on every render, so it is a warning naming the package to install."""

import ctypes.util

from config.checks import HARFBUZZ_SUBSET, report_font_checks


def test_a_machine_without_harfbuzz_subset_is_told_what_to_install(monkeypatch):
    real = ctypes.util.find_library
    monkeypatch.setattr(
        ctypes.util, "find_library", lambda name: None if name == HARFBUZZ_SUBSET else real(name)
    )
    [warning] = report_font_checks()
    assert warning.id == "trustcal.W003" and "apt-get install -y libharfbuzz-subset0" in warning.msg


def test_a_machine_with_it_is_not_warned():
    assert ctypes.util.find_library(HARFBUZZ_SUBSET), "this image installs libharfbuzz-subset0 (.ci/run)"
    assert report_font_checks() == []
