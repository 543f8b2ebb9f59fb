# ruff: noqa: S608 -- the SQL here is built from constants of this script (bulk seeding), never from input
"""The bulk seed of calibration_bench.py: decisions, their audit entries, the chain head, every
column of the calibration aggregates (docs/architecture.md, Calibration aggregates) in SQL, and
the Merkle tree extended over the seeded entries by the service's own `audit.tree.tree_append`
(otherwise the first append after a seed would rebuild the whole tree inside a request).

The seeded decisions have what the measures read: a confidence on 90 % (the rest none), an outcome
on 40 %, an initial decision on 20 %, reviewers who follow a confident AI more often, and the
record category of docs/reference/calibration.md (UNSCORED with neither confidence nor outcome).
The seeded entries carry placeholder hashes (format 1): the seeded part of the chain is not meant
to verify. `seed_check` compares the seeded aggregate rows of a few users with the sums the
service's own rule (`audit.measures.contribution`) gives over the same decisions, and stops the
benchmark when a column differs, so the seed cannot silently drift from the aggregates.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
CUSTOMER = "bench"
USERS = 1000

# Per seeded decision: f followed, c confidence (may be NULL), y 1/0 when the outcome is known.
_F = "followed_ai::int"
_Y = "(outcome = ai_recommendation)::int"
_P = f"coalesce(ai_confidence, {_Y})"  # NULL for an unscored decision
_SCORED = "(ai_confidence IS NOT NULL OR outcome IS NOT NULL)"
# Stake weights and incidents need a confidence (audit.measures.contribution).
_CONF = "ai_confidence IS NOT NULL"
_WO = "greatest(0, 1 - 2 * ai_confidence)"
_WU = "greatest(0, 2 * ai_confidence - 1)"
_RELY = "initial_decision IS NOT NULL AND outcome IS NOT NULL"


def _when(condition: str, value: str) -> str:
    return f"coalesce(sum(CASE WHEN {condition} THEN {value} END), 0)"


# Every column of the aggregate, as docs/architecture.md's table defines it.
SUMS = {
    "n": "count(*)",
    "followed": f"sum({_F})",
    "overtrust": _when(_CONF, "(calibration_category = 'OVERTRUSTING')::int"),
    "undertrust": _when(_CONF, "(calibration_category = 'UNDERTRUSTING')::int"),
    "conf_n": "count(ai_confidence)",
    "conf_sum": "coalesce(sum(ai_confidence), 0)",
    "outcome_n": "count(outcome)",
    "ai_right_n": _when("outcome IS NOT NULL", _Y),
    "followed_wrong": _when("outcome IS NOT NULL", f"{_F} * (1 - {_Y})"),
    "overrode_right": _when("outcome IS NOT NULL", f"(1 - {_F}) * {_Y}"),
    "gap_sum": _when(_SCORED, f"{_F} - CASE WHEN outcome IS NOT NULL THEN {_Y} ELSE ai_confidence END"),
    "scored_n": _when(_SCORED, "1"),
    "scored_followed": _when(_SCORED, _F),
    "p_sum": _when(_SCORED, _P),
    "q_sum": _when(
        _SCORED,
        f"CASE WHEN outcome IS NOT NULL THEN ({_F} = {_Y})::int "
        f"ELSE {_F} * ai_confidence + (1 - {_F}) * (1 - ai_confidence) END",
    ),
    "a_conf_sum": "coalesce(sum(greatest(ai_confidence, 1 - ai_confidence)), 0)",
    "oo_n": _when("outcome IS NOT NULL AND ai_confidence IS NULL", "1"),
    "oo_followed_wrong": _when("outcome IS NOT NULL AND ai_confidence IS NULL", f"{_F} * (1 - {_Y})"),
    "wo_sum": _when(_CONF, _WO),
    "wo_sq": _when(_CONF, f"{_WO} * {_WO}"),
    "fwo_sum": _when(_CONF, f"{_F} * {_WO}"),
    "wu_sum": _when(_CONF, _WU),
    "wu_sq": _when(_CONF, f"{_WU} * {_WU}"),
    "uwu_sum": _when(_CONF, f"(1 - {_F}) * {_WU}"),
    "cy_n": _when("outcome IS NOT NULL AND ai_confidence IS NOT NULL", "1"),
    "brier_sum": _when("outcome IS NOT NULL AND ai_confidence IS NOT NULL", f"(ai_confidence - {_Y}) ^ 2"),
    "sw_den": _when(f"{_RELY} AND initial_decision <> ai_recommendation", "1"),
    "sw_num": _when(f"{_RELY} AND initial_decision <> ai_recommendation", _F),
    "rair_den": _when(f"{_RELY} AND initial_decision <> outcome AND {_Y} = 1", "1"),
    "rair_num": _when(f"{_RELY} AND initial_decision <> outcome AND {_Y} = 1", _F),
    "rsr_den": _when(f"{_RELY} AND initial_decision = outcome AND {_Y} = 0", "1"),
    "rsr_num": _when(
        f"{_RELY} AND initial_decision = outcome AND {_Y} = 0", "(user_decision = initial_decision)::int"
    ),
}

# Decision g (user g % 1000): the AI's recommendation, a confidence on 90 % (none on the rest),
# followed when a second draw is under 0.3 + 0.6 * confidence, an outcome on 40 % (the AI right with
# probability c), an initial decision on 20 % (so 8 % have both). The draws use moduli prime to
# 1,000, so that each user's decisions vary (a draw modulo 1,000 would be constant per user).
_DECISIONS = """
SELECT g, ai, c, CASE WHEN u < 0.3 + 0.6 * coalesce(c, 0.5) THEN ai ELSE other END AS ud,
    CASE WHEN h2 < 0.4 THEN CASE WHEN v < coalesce(c, 0.7) THEN ai ELSE other END END AS outcome,
    CASE WHEN h3 < 0.2 THEN CASE WHEN h3 < 0.1 THEN ai ELSE other END END AS initial
FROM (SELECT g, CASE WHEN g % 3 = 0 THEN 'deny' ELSE 'approve' END AS ai,
             CASE WHEN g % 3 = 0 THEN 'approve' ELSE 'deny' END AS other,
             CASE WHEN (g::bigint * 2654435761) % 1009 < 908 THEN ((g::bigint * 7919) % 1021) / 1021.0 END AS c,
             ((g::bigint * 104729) % 1031) / 1031.0 AS u, ((g::bigint * 65537) % 997) / 997.0 AS v,
             ((g::bigint * 40503) % 1019) / 1019.0 AS h2, ((g::bigint * 69069) % 1013) / 1013.0 AS h3
      FROM generate_series({first}, {last}) g) s
"""

# The record rule (docs/reference/calibration.md): the confidence judges the act; without one a
# known outcome decides; with neither the record is UNSCORED.
_CATEGORY = """CASE
    WHEN c IS NOT NULL AND ai = ud AND c < 0.5 THEN 'OVERTRUSTING'
    WHEN c IS NOT NULL AND ai <> ud AND c > 0.5 THEN 'UNDERTRUSTING'
    WHEN c IS NOT NULL THEN 'CALIBRATED'
    WHEN outcome IS NOT NULL AND ai = ud AND outcome <> ai THEN 'OVERTRUSTING'
    WHEN outcome IS NOT NULL AND ai <> ud AND outcome = ai THEN 'UNDERTRUSTING'
    WHEN outcome IS NOT NULL THEN 'CALIBRATED'
    ELSE 'UNSCORED' END"""


def sh(*args: str, env=None, check=True) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, env=env, check=check, capture_output=True, text=True)


def psql(db: str, sql: str) -> str:
    done = sh("psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql,
              check=False)  # fmt: skip
    if done.returncode:
        sys.exit(f"psql failed: {done.stderr}")
    return done.stdout


def _seeded(first: int, last: int) -> str:
    return (
        f"customer_id = '{CUSTOMER}' AND decision_id LIKE 'seed-%' "
        f"AND substring(decision_id from 6)::bigint BETWEEN {first} AND {last}"
    )


def seed(db: str, env: dict, first: int, last: int) -> None:
    """Decisions seed-{first..last} for `bench`: 1,000 users, 5 models, over the last 89 days."""
    psql(
        db,
        f"""
        INSERT INTO audit_decision (customer_id, decision_id, user_id, model_id, model_version, ai_recommendation,
            ai_confidence, user_decision, initial_decision, outcome, context, subgroups, metadata, timestamp,
            logged_at, followed_ai, calibration_category, payload_fingerprint)
        SELECT '{CUSTOMER}', 'seed-' || g, 'user-' || (g % {USERS}), 'model-' || (g / 1000 % 5), '1', ai, c, ud, initial,
            outcome, 'seeded', '{{}}', '{{}}',
            now() - ((g % 89) || ' days')::interval - ((g % 3600) || ' seconds')::interval,
            now(), ai = ud, {_CATEGORY}, ''
        FROM ({_DECISIONS.format(first=first, last=last)}) d;
    """,
    )
    base = int(
        psql(db, f"SELECT sequence FROM audit_chainhead WHERE customer_id = '{CUSTOMER}'").strip() or 0
    )
    psql(
        db,
        f"""
        INSERT INTO audit_chainhead (customer_id, sequence, head_hash, previous_head_hash, decisions, erased,
            followers, updated_at)
        VALUES ('{CUSTOMER}', 0, repeat('0', 64), repeat('0', 64), 0, 0, 0, now()) ON CONFLICT DO NOTHING;
        INSERT INTO audit_auditentry (id, customer_id, decision_id, sequence, type, decision_ref, timestamp, logged_at,
            user_id, model_id, model_version, ai_recommendation, ai_confidence, user_decision, followed_ai,
            calibration_category, outcome, context, subgroups, hash, previous_hash, format, erased)
        SELECT 'aud_seed' || id, customer_id, id, {base} + row_number() OVER (ORDER BY id), 'decision',
            decision_id, timestamp, logged_at, user_id, model_id, model_version, ai_recommendation,
            ai_confidence, user_decision, followed_ai, calibration_category, outcome, context, subgroups,
            encode(sha256(('seed' || id)::bytea), 'hex'), repeat('0', 64), 1, false
        FROM audit_decision WHERE {_seeded(first, last)};
        UPDATE audit_chainhead h SET sequence = s.seq, decisions = h.decisions + {last - first + 1},
            head_hash = encode(sha256(('seed-head' || s.seq)::bytea), 'hex')
        FROM (SELECT max(sequence) AS seq FROM audit_auditentry WHERE customer_id = '{CUSTOMER}') s
        WHERE h.customer_id = '{CUSTOMER}';
    """,
    )
    cols = ", ".join(SUMS)
    updates = ", ".join(f"{n} = calibration_userdailyaggregate.{n} + excluded.{n}" for n in SUMS)
    for key in ("'*'", "model_id"):
        psql(
            db,
            f"""
            INSERT INTO calibration_userdailyaggregate (customer_id, user_id, model_key, day, {cols})
            SELECT customer_id, user_id, {key}, (timestamp AT TIME ZONE 'UTC')::date, {", ".join(SUMS.values())}
            FROM audit_decision WHERE {_seeded(first, last)}
            GROUP BY 1, 2, 3, 4
            ON CONFLICT (customer_id, user_id, model_key, day) DO UPDATE SET {updates};
        """,
        )
    django(env, TREE.format(customer=CUSTOMER, start=base))
    psql(db, "ANALYZE")


# The seeded entries' hashes appended to the tree by the service's own code, in chunks.
TREE = """
from audit.models import AuditEntry
from audit.tree import tree_append
hashes = list(AuditEntry.objects.filter(customer_id={customer!r}, sequence__gt={start})
              .order_by("sequence").values_list("hash", flat=True))
for at in range(0, len(hashes), 50_000):
    tree_append({customer!r}, {start} + at, hashes[at : at + 50_000], with_root=False)
"""

CHECK = """
import json, math
from django.db.models import Sum
from audit.measures import SUM_FIELDS, contribution, record_category
from audit.models import Decision
from calibration.models import UserDailyAggregate
from calibration.rules import record_of
wrong = []
for user in USERS:
    rows = Decision.objects.filter(customer_id=CUSTOMER, user_id=user)
    want = dict.fromkeys(SUM_FIELDS, 0.0)
    for d in rows:
        rule = record_category(ai_recommendation=d.ai_recommendation, user_decision=d.user_decision,
                               confidence=d.ai_confidence, outcome=d.outcome)
        if rule != d.calibration_category:
            wrong.append(f"{d.decision_id}: category {d.calibration_category}, the rule says {rule}")
        for name, value in contribution(record_of(d)).items():
            want[name] += value
    for models in (True, False):  # the all-models rows, then the per-model rows together
        rows = UserDailyAggregate.objects.filter(customer_id=CUSTOMER, user_id=user)
        rows = rows.filter(model_key="*") if models else rows.exclude(model_key="*")
        stored = dict.fromkeys(SUM_FIELDS, 0.0)
        for row in rows:
            for name in SUM_FIELDS:
                stored[name] += getattr(row, name)
        for name in SUM_FIELDS:
            if not math.isclose(stored[name], want[name], rel_tol=1e-9, abs_tol=1e-9):
                wrong.append(f"{user} {name} ({'all' if models else 'per'} models): seeded {stored[name]}, the rule gives {want[name]}")
all_rows = UserDailyAggregate.objects.filter(customer_id=CUSTOMER, model_key="*")
total = all_rows.aggregate(**{name: Sum(name) for name in SUM_FIELDS})
wrong += [f"{name}: 0 over every user (the seed leaves a measure's column empty)" for name in SUM_FIELDS if not total[name]]
print("CHECK" + json.dumps(wrong[:10]))
"""


def django(env: dict, code: str) -> str:
    return sh(str(BIN / "python"), "manage.py", "shell", "-v0", "-c", code, env=env).stdout


def seed_check(env: dict, users: tuple[str, ...] = ("user-7", "user-500", "user-993")) -> None:
    """Stop when the seed disagrees with the service's rule (a column or a category)."""
    out = django(env, f"CUSTOMER = {CUSTOMER!r}\nUSERS = {list(users)!r}\n" + CHECK)
    wrong = json.loads(out.split("CHECK", 1)[1])
    if wrong:
        sys.exit("the seed disagrees with audit.measures.contribution:\n" + "\n".join(wrong))
