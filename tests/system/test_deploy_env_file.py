"""The guide's environment file (docs/deploy.md, "The environment file") is read alike by the
three usual loaders, and production settings read what it means. The block is taken from the
guide itself; a shell loads it for real (`set -a; . file`), and systemd's `EnvironmentFile=`
and docker's `--env-file` rules, which need a running systemd or docker engine, are applied as
their documentation states them."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings.storage import storage_options
from tests.processes import ROOT


def guide_env_file() -> str:
    guide = (ROOT / "docs" / "deploy.md").read_text()
    section = guide[guide.index("## The environment file (every host)") :]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "docs/deploy.md has no environment file block"
    return found.group(1)


def shell_loads(path: Path) -> dict[str, str]:
    script = f'set -a; . "{path}"; set +a; exec "{sys.executable}" -c "import json, os; print(json.dumps(dict(os.environ)))"'
    out = subprocess.run(
        ["bash", "-c", script], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True
    )
    environment = json.loads(out.stdout)
    return {
        k: v for k, v in environment.items() if k not in ("PATH", "PWD", "SHLVL", "_", "OLDPWD", "LC_CTYPE")
    }


def docker_loads(text: str) -> dict[str, str]:
    """docker run --env-file: a line is VAR=VAL or VAR; lines starting with # and blank lines
    are skipped; the value is everything after the first `=`, as is (no quotes removed)."""
    loaded = {}
    for line in text.splitlines():
        line = line.lstrip()
        if not line or line.startswith("#"):
            continue
        name, _, value = line.partition("=")
        loaded[name] = value
    return loaded


def systemd_loads(text: str) -> dict[str, str]:
    """systemd EnvironmentFile=: lines starting with # or ; are comments; KEY=VALUE with
    whitespace around the value trimmed, surrounding quotes removed, a trailing backslash
    continuing the line."""
    loaded = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        name, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        loaded[name.strip()] = value
    return loaded


def test_the_guides_environment_file_reads_alike_in_a_shell_systemd_and_docker(tmp_path):
    text = guide_env_file()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            assert re.fullmatch(r"[A-Z][A-Z0-9_]*=[^\s'\"$`\\#]*", line), (
                f"not read alike by every loader: {line}"
            )
    path = tmp_path / "trustcal.env"
    path.write_text(text)
    shell, docker, systemd = shell_loads(path), docker_loads(text), systemd_loads(text)
    assert shell == docker == systemd
    assert shell["TRUSTCAL_EXPORT_STORAGE_OPTIONS"] == "location=/mnt/trustcal-reports"
    assert shell["WEBHOOK_ALLOWED_NETWORKS"] == ""


def test_production_settings_read_the_guides_file_and_refuse_its_placeholders(tmp_path):
    environment = docker_loads(guide_env_file())
    environment.update({"PATH": "/usr/bin:/bin", "TRUSTCAL_DATA_DIR": str(tmp_path / "data")})
    read = subprocess.run(
        [sys.executable, "-c", (
            "import django, json; django.setup(); from django.conf import settings as s; "
            "print(json.dumps([s.STORAGES['exports']['OPTIONS'], s.TRUSTED_PROXIES, s.WEBHOOK_DISPATCH_THREADS]))"
        )],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout) == [{"location": "/mnt/trustcal-reports"}, ["10.0.0.5"], 4]
    refused = subprocess.run(
        [sys.executable, "manage.py", "check", "--tag", "trustcal"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )  # fmt: skip
    assert refused.returncode != 0 and "trustcal.E001" in refused.stderr  # DJANGO_SECRET_KEY=REPLACE_ME


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("location=/mnt/r", {"location": "/mnt/r"}),
        (
            "bucket_name=reports, region_name=eu-west-1",
            {"bucket_name": "reports", "region_name": "eu-west-1"},
        ),
        (
            '{"location": "/mnt/r", "file_permissions_mode": 384}',
            {"location": "/mnt/r", "file_permissions_mode": 384},
        ),
    ],
)
def test_storage_options_are_key_value_pairs_or_json(text, options):
    assert storage_options(text) == options


@pytest.mark.parametrize("text", ['{"location": /mnt/r}', "location", '["location"]', "=x"])
def test_unreadable_storage_options_name_the_variable(text):
    with pytest.raises(ImproperlyConfigured, match="TRUSTCAL_EXPORT_STORAGE_OPTIONS"):
        storage_options(text)
