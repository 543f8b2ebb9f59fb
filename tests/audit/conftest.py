"""Fixtures of the audit tests: the checkpoint signing key, and workers that sign."""

import pytest

from audit import checkpoint_key


@pytest.fixture
def key_path(settings, tmp_path):
    checkpoint_key.signing_key.cache_clear()
    yield tmp_path
    checkpoint_key.signing_key.cache_clear()


@pytest.fixture
def worker_signs(django_capture_on_commit_callbacks):
    """Appends commit, then the worker's task (run in this thread) signs: the after-commit
    callbacks of everything inside the block run at its end, tasks eagerly."""
    from config.celery import app

    app.conf.task_always_eager = True
    try:
        yield lambda: django_capture_on_commit_callbacks(execute=True)
    finally:
        app.conf.task_always_eager = False
