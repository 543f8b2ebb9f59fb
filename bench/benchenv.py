"""What the HTTP benchmarks share: a fresh PostgreSQL database and Redis db migrated for the
service, and API keys made in it. Imported by the bench scripts (run as `python bench/x.py`,
so this folder is on sys.path)."""

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def checkout_root() -> Path:
    """The checkout an in-process benchmark measures: `--root DIR` on the command line (an earlier
    commit, run with this venv), else this one; put first on sys.path, with the local settings."""
    root = Path(sys.argv[sys.argv.index("--root") + 1]) if "--root" in sys.argv else ROOT
    sys.path.insert(0, str(root))
    # Celery's Django fix-up puts the working directory first on sys.path when config.celery is
    # imported: from another directory, every module imported after it came from there.
    os.chdir(root)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    return root


def sh(*args: str, env=None, check=True, input=None) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, check=check, capture_output=True, text=True, input=input)


def fresh_stack(*, db: str, redis_db: str, data_dir: str | Path, keep: bool = False) -> dict[str, str]:
    """Drop and create database `db` (with `keep`, leave it as an earlier run left it), flush
    Redis db `redis_db` (of the server on port BENCH_REDIS_PORT, 6379 by default), migrate;
    returns the environment for manage.py and gunicorn against them."""
    port = os.environ.get("BENCH_REDIS_PORT", "6379")
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{db}",
        REDIS_URL=f"redis://127.0.0.1:{port}/{redis_db}",
        TRUSTCAL_DATA_DIR=str(data_dir),
    )
    psql = ("psql", "-h", "127.0.0.1", "-U", "postgres", "-qc")
    if not keep:
        # Quoted: the name as given, upper case too (the URL above names it so).
        sh(*psql, f'DROP DATABASE IF EXISTS "{db}"', "-c", f'CREATE DATABASE "{db}"')
    sh("redis-cli", "-p", port, "-n", str(redis_db), "flushdb")
    sh(str(BIN / "python"), "manage.py", "migrate", "-v0", env=env)
    return env


def make_keys(env: dict[str, str], *, customer: str, count: int, admin: bool = False) -> list[str]:
    """`count` enterprise keys of `customer` (admin keys with `admin`), made through the service."""
    code = (
        "from keys.services import api_key_create\n"
        f"for i in range({count}): print(api_key_create(customer_id={customer!r}, tier='enterprise'"
        f"{', is_admin=True' if admin else ''}).value)\n"
    )
    out = sh(str(BIN / "python"), "manage.py", "shell", "-v0", "-c", code, env=env).stdout
    return [k for k in out.split() if k.startswith("tcal_")]


def wait_healthy(base: str, attempts: int = 900) -> None:
    """Poll `base`/v1/health (a service just started) until it answers, 0.1 s apart (90 s: on a
    loaded machine gunicorn's workers took over 10 s to start, and a run that went on measured
    refused connections as errors); raise when it never does."""
    for _ in range(attempts):
        try:
            urllib.request.urlopen(f"{base}/v1/health", timeout=1)
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{base}/v1/health never answered")


def in_process_service() -> None:
    """Django set up in this process for the test client (after checkout_root): the database
    migrated, any host allowed, the tier rate limit off."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    call_command("migrate", verbosity=0)
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    settings.RATE_LIMITS_ENABLED = False


def api_client(customer: str):
    """A test client with a new enterprise key of `customer` (in_process_service first)."""
    from rest_framework.test import APIClient

    from keys.services import api_key_create

    client = APIClient()
    client.credentials(
        HTTP_AUTHORIZATION=f"Bearer {api_key_create(customer_id=customer, tier='enterprise').value}"
    )
    return client
