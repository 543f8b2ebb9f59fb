"""Group commit (docs/reference/decisions.md, Group commit): concurrent POST /log and
POST /calibrate requests of one customer commit together, each answering its own result; a
request that fails validation never waits for a group; a database error in a group's
transaction fails only the item that causes it.

The requests are threads posting through the real view stack. To make a group form at a
known moment, the first leader's write is held at a gate (the committer is the service's own
GroupCommit around the real pipeline; only the start of its first write waits) while the
other requests queue up behind it, one at a time so their order is known. The database error
is a real one: a trigger that refuses one user's decisions."""

import threading
import time
from collections.abc import Iterator

import pytest
from django.db import connection, connections

from audit import services as audit_services
from audit.group import GroupCommit
from audit.models import AuditEntry, Decision
from audit.pipeline import items_write
from tests.audit.factories import decision_body
from tests.conftest import client_for, make_key

pytestmark = pytest.mark.django_db(transaction=True)


class Gate:
    """The service's GroupCommit whose first write after arm() waits until released."""

    def __init__(self) -> None:
        self.armed = threading.Event()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.committer = GroupCommit(self._write)

    def _write(self, **kwargs):
        if self.armed.is_set() and not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(20)
        return items_write(**kwargs)

    def queued(self, customer_id: str) -> int:
        with self.committer._lock:
            return len(self.committer._queues.get(customer_id, []))


@pytest.fixture
def gate(monkeypatch, settings) -> Gate:
    settings.RATE_LIMITS_ENABLED = False
    gate = Gate()
    monkeypatch.setattr(audit_services, "group_commit", gate.committer)
    return gate


def _wait_for(condition, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


class Requests:
    """Requests posted from their own threads; answers kept by name."""

    def __init__(self, key_value: str) -> None:
        self.key_value = key_value
        self.answers: dict[str, tuple[int, dict]] = {}
        self.threads: list[threading.Thread] = []

    def post(self, name: str, path: str, body: dict) -> None:
        def work() -> None:
            try:
                r = client_for(self.key_value).post(path, body, format="json")
                self.answers[name] = (r.status_code, r.json())
            finally:
                connections.close_all()

        thread = threading.Thread(target=work)
        thread.start()
        self.threads.append(thread)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(30)


@pytest.fixture
def exploding_user() -> Iterator[str]:
    """A trigger that makes the database refuse any decision of user 'explode'."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION tc_test_explode() RETURNS trigger AS $$ BEGIN "
                "IF NEW.user_id = 'explode' THEN RAISE EXCEPTION 'refused by test trigger'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER tc_test_explode BEFORE INSERT ON audit_decision "
                "FOR EACH ROW EXECUTE FUNCTION tc_test_explode()"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER tc_test_explode BEFORE INSERT ON audit_decision "
                "WHEN NEW.user_id = 'explode' BEGIN SELECT RAISE(ABORT, 'refused by test trigger'); END"
            )
    yield "explode"
    with connection.cursor() as cursor:
        cursor.execute(
            "DROP TRIGGER tc_test_explode"
            + (" ON audit_decision" if connection.vendor == "postgresql" else "")
        )
        if connection.vendor == "postgresql":
            cursor.execute("DROP FUNCTION tc_test_explode()")


def _hold_a_leader(gate: Gate, requests: Requests) -> None:
    """A first request that leads and is held at the gate."""
    gate.armed.set()
    requests.post("leader", "/v1/log", decision_body(decision_id="lead", user_id="u0"))
    _wait_for(gate.entered.is_set)


def _queue(gate: Gate, requests: Requests, name: str, path: str, body: dict) -> None:
    before = gate.queued("acme")
    requests.post(name, path, body)
    _wait_for(lambda: gate.queued("acme") == before + 1)


def test_a_database_error_of_one_grouped_item_fails_only_that_request(gate, exploding_user):
    key = make_key("acme", "enterprise")
    requests = Requests(key.value)
    _hold_a_leader(gate, requests)
    for i in range(5):
        _queue(gate, requests, f"d{i}", "/v1/log", decision_body(decision_id=f"d{i}", user_id="u1"))
    _queue(gate, requests, "bad", "/v1/log", decision_body(decision_id="bad", user_id=exploding_user))
    _queue(gate, requests, "cal", "/v1/calibrate", decision_body(decision_id="cal", user_id="u2"))
    gate.release.set()
    requests.join()

    assert requests.answers["bad"][0] == 500
    stored = {name for name, (status, _) in requests.answers.items() if status in (200, 201)}
    assert stored == {"leader", "d0", "d1", "d2", "d3", "d4", "cal"}
    assert set(Decision.objects.filter(customer_id="acme").values_list("decision_id", flat=True)) == {
        "lead", "d0", "d1", "d2", "d3", "d4", "cal",
    }  # fmt: skip
    assert gate.committer.stats.largest == 7 and gate.committer.stats.retried == 1
    verify = client_for(key.value).get("/v1/audit-trail/verify").json()
    assert verify["valid"] is True and verify["entries_checked"] == 7


def test_each_grouped_request_answers_its_own_result_in_arrival_order(gate):
    key = make_key("acme", "enterprise")
    api = client_for(key.value)
    assert (
        api.post("/v1/log", decision_body(decision_id="old", user_id="u0"), format="json").status_code == 201
    )
    requests = Requests(key.value)
    _hold_a_leader(gate, requests)  # sequence 2
    _queue(gate, requests, "new", "/v1/log", decision_body(decision_id="new", user_id="u1"))
    _queue(gate, requests, "replay", "/v1/log", decision_body(decision_id="old", user_id="u0"))
    _queue(gate, requests, "conflict", "/v1/log", decision_body(decision_id="new", user_id="someone-else"))
    _queue(gate, requests, "outcome", "/v1/log", {"decision_id": "new", "outcome": "deny"})
    _queue(gate, requests, "unknown", "/v1/log", {"decision_id": "nope", "outcome": "deny"})
    _queue(gate, requests, "cal", "/v1/calibrate", decision_body(decision_id="cal", user_id="u1"))
    # A body that fails validation is answered at once, while the group is still held.
    bad = api.post("/v1/log", {"user_id": "u1"}, format="json")
    assert bad.status_code == 400 and gate.queued("acme") == 6
    gate.release.set()
    requests.join()

    answers = requests.answers
    assert {name: status for name, (status, _) in answers.items()} == {
        "leader": 201, "new": 201, "replay": 200, "conflict": 409, "outcome": 201, "unknown": 404, "cal": 200,
    }  # fmt: skip
    assert answers["leader"][1]["sequence"] == 2
    assert answers["new"][1]["sequence"] == 3
    assert answers["replay"][1]["sequence"] == 1
    assert answers["outcome"][1]["sequence"] == 4 and answers["outcome"][1]["type"] == "outcome"
    assert answers["conflict"][1]["code"] == "DECISION_CONFLICT"
    cal_entry = AuditEntry.objects.get(id=answers["cal"][1]["entry_id"])
    assert cal_entry.sequence == 5
    hashes = [answers[n][1]["hash"] for n in ("leader", "new", "outcome")]
    assert len(set(hashes)) == 3
    assert gate.committer.stats.largest == 6
    verify = api.get("/v1/audit-trail/verify").json()
    assert verify["valid"] is True and verify["entries_checked"] == 5


def test_a_caller_inside_a_transaction_writes_alone(gate):
    """Nothing waits: the write joins the caller's own transaction instead of a group."""
    from django.db import transaction

    from keys.models import Customer

    make_key("acme", "enterprise")
    customer = Customer.objects.get(pk="acme")
    with transaction.atomic():
        result = audit_services.decision_log(
            customer=customer, data=_validated(decision_body(decision_id="t1"))
        )
    assert result.created and gate.committer.stats.groups == 0
    assert Decision.objects.filter(decision_id="t1").exists()


def _validated(body: dict):
    from audit.inputs import decision_validated

    return decision_validated(body)


def test_a_follower_that_waits_too_long_is_withdrawn_and_answers_503(gate, settings):
    settings.DECISION_GROUP_WAIT_SECONDS = 0.3
    key = make_key("acme", "enterprise")
    requests = Requests(key.value)
    _hold_a_leader(gate, requests)
    requests.post("late", "/v1/log", decision_body(decision_id="late", user_id="u1"))
    _wait_for(lambda: "late" in requests.answers)
    status, body = requests.answers["late"]
    assert status == 503 and body["code"] == "SERVICE_UNAVAILABLE"
    assert "withdrawn: nothing of it was stored" in body["detail"]
    assert gate.queued("acme") == 0
    gate.release.set()
    requests.join()
    assert requests.answers["leader"][0] == 201
    assert list(Decision.objects.filter(customer_id="acme").values_list("decision_id", flat=True)) == ["lead"]


def _backend_alive(cursor, pid: int) -> bool:
    cursor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
    return cursor.fetchone() is not None


class LosingGate(Gate):
    """A group of more than one item loses its database connection (its server process is
    terminated from another connection) before it writes."""

    def _write(self, **kwargs):
        if len(kwargs["items"]) > 1:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                (pid,) = cursor.fetchone()
            other = connections.create_connection("default")
            try:
                with other.cursor() as cursor:
                    cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
                    _wait_for(lambda: not _backend_alive(cursor, pid), 5)  # the signal is asynchronous
            finally:
                other.close()
        return super()._write(**kwargs)


@pytest.mark.postgres
def test_a_group_that_loses_its_connection_answers_503_without_retrying_item_by_item(monkeypatch, settings):
    settings.RATE_LIMITS_ENABLED = False
    gate = LosingGate()
    monkeypatch.setattr(audit_services, "group_commit", gate.committer)
    key = make_key("acme", "enterprise")
    requests = Requests(key.value)
    _hold_a_leader(gate, requests)
    for i in range(3):
        _queue(gate, requests, f"d{i}", "/v1/log", decision_body(decision_id=f"d{i}", user_id="u1"))
    gate.release.set()
    requests.join()

    assert requests.answers["leader"][0] == 201  # its own group of one, written before
    for name in ("d0", "d1", "d2"):
        status, body = requests.answers[name]
        assert status == 503 and body["code"] == "SERVICE_UNAVAILABLE", body
        assert "connection was lost" in body["detail"]
    assert gate.committer.stats.retried == 0
    assert list(Decision.objects.filter(customer_id="acme").values_list("decision_id", flat=True)) == ["lead"]
