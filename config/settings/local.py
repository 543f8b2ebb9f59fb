"""Local development and the embedded default (the module manage.py uses by default)."""

from .base import *  # noqa: F403
