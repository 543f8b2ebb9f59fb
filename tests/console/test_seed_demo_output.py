"""What seed_demo prints on a fresh database: where to sign in (at the service's bind), when to
start the service, and its two months, reprinted by a second run."""

import io

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def seed() -> str:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_seed_demo_signs_in_at_its_bind_says_when_to_start_the_service_and_reprints_its_months(settings):
    import re
    import socket

    settings.BIND = (
        "0.0.0.0:8201"  # a wildcard bind is reached on the loopback address; nothing listens there
    )
    first = seed()
    done = first.splitlines()[-1]
    assert done.startswith("Done in ") and "Then start the service (`make run`) and sign in at " in done
    assert "http://127.0.0.1:8201/admin/ as demo-officer" in done and ":8000" not in first
    assert "start the service" not in "\n".join(first.splitlines()[:-1]).lower(), "only once it is done"
    months = [line for line in first.splitlines() if re.search(r" month \d{4}-", line)]
    assert len(months) == 2 and all(re.search(r"states [A-Z_]+\.$", line) for line in months), months

    with socket.socket() as listener:  # the service, already running on another bind
        listener.bind(("127.0.0.1", 8202))
        listener.listen()
        settings.BIND = "127.0.0.1:8202"
        second = seed()
    assert "exists already" in second
    assert [line for line in second.splitlines() if re.search(r" month \d{4}-", line)] == months
    assert second.splitlines()[-1].endswith(
        "The service answers on 127.0.0.1:8202: sign in at http://127.0.0.1:8202/admin/ as demo-officer "
        "(a compliance officer) or demo-admin (everything)."
    )
