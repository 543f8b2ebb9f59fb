"""On PostgreSQL, POST /detect-bias racing POST /log on the same decision_id never loses
the subgroups, and concurrent re-attachments never double-count."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from tests.conftest import client_for, make_key

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_detect_bias_racing_post_log_counts_every_decision_once(transactional_db):
    key = make_key("acme", "enterprise").value
    ids = [f"race-{i}" for i in range(40)]

    def attach(decision_id):
        try:
            body = {
                "decision_id": decision_id,
                "subgroups": {"gender": "f" if decision_id[-1] in "02468" else "m"},
            }
            return client_for(key).post("/v1/detect-bias", body, format="json").status_code
        finally:
            connection.close()

    def log(decision_id):
        try:
            body = {
                "decision_id": decision_id,
                "user_id": "u",
                "ai_recommendation": "approve",
                "user_decision": "approve",
            }
            return client_for(key).post("/v1/log", body, format="json").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = []
        for decision_id in ids:
            futures.append(pool.submit(attach, decision_id))
            futures.append(pool.submit(log, decision_id))
            futures.append(pool.submit(attach, decision_id))
        assert {f.result() for f in futures} <= {200, 201}

    report = client_for(key).get("/v1/bias/subgroups", {"attribute": "gender"}).json()
    groups = {g["group"]: g["decisions"] for g in report["attributes"]["gender"]["groups"]}
    assert groups == {"f": 20, "m": 20}


def test_detect_bias_racing_writes_that_lock_the_stored_decision_never_deadlocks(transactional_db):
    """A late outcome (and a replay) locks the stored decision's row; POST /detect-bias holds
    the decision's lock while its audit entry references that row. Both take the decision's
    lock before its row, so neither waits for the other in a cycle (a deadlock answered 500)."""
    key = make_key("acme", "enterprise").value
    ids = [f"stored-{i}" for i in range(30)]
    base = {"user_id": "u", "ai_recommendation": "approve", "user_decision": "approve"}
    logged = client_for(key).post(
        "/v1/log/batch", {"decisions": [{**base, "decision_id": d} for d in ids]}, format="json"
    )
    assert logged.status_code == 200 and logged.json()["accepted"] == len(ids)

    def call(path, body):
        try:
            return client_for(key).post(path, body, format="json").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        futures = []
        for round_ in range(3):
            for decision_id in ids:
                gender = "f" if round_ % 2 else "m"
                futures.append(
                    pool.submit(
                        call, "/v1/detect-bias", {"decision_id": decision_id, "subgroups": {"gender": gender}}
                    )
                )
                outcome = "approve" if round_ % 2 else "deny"
                futures.append(pool.submit(call, "/v1/log", {"decision_id": decision_id, "outcome": outcome}))
                futures.append(pool.submit(call, "/v1/log", {**base, "decision_id": decision_id}))
        assert sorted({f.result() for f in futures}) == [200, 201]
    assert client_for(key).get("/v1/audit-trail/verify").json()["valid"] is True
