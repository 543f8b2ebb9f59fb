"""A test-only app that no import-linter contract names: tests/system/test_boundaries.py installs it
to show that an app left out of the contracts fails the check."""
