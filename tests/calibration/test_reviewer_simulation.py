"""A seeded simulation of reviewers of known behaviour (docs/reference/calibration.md, Simulation):
the category each kind of reviewer gets under five ways of logging, and the organisation's
status and trend where nothing changes. The confusion table printed in the reference is this
test's: it regenerates the table and fails when the reference differs (run with
REGENERATE_DOCS=1 to write it)."""

import math
import os
import random
from collections import Counter
from pathlib import Path

import pytest

from audit import measures
from calibration import confidence
from calibration.periods import trend_summary
from compliance.eu_ai_act import NON_COMPLIANT, compliance_status

TH = measures.Thresholds()
DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "calibration.md"
BEGIN, END = "<!-- simulation table: begin -->", "<!-- simulation table: end -->"
REVIEWERS, DECISIONS = 30, 200

ND = measures.NON_DISCRIMINATING
FLAGGED_OVER = {measures.OVERTRUSTING, ND}


def expit(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def logit(p: float) -> float:
    return math.log(p / (1 - p))


# What each kind of reviewer does with advice whose true chance of being right is `truth`
# (what a well-informed reviewer can tell; it is the stated confidence unless the AI is
# miscalibrated).
KINDS = {
    "calibrated": lambda truth, rng: truth > 0.5,
    "random 0.3": lambda truth, rng: rng.random() < 0.3,
    "random 0.5": lambda truth, rng: rng.random() < 0.5,
    "random 0.8": lambda truth, rng: rng.random() < 0.8,
    "rubber-stamp": lambda truth, rng: True,
    "over-truster": lambda truth, rng: truth > 0.5 or rng.random() < 0.8,
    "under-truster": lambda truth, rng: truth > 0.5 and rng.random() < 0.5,
    "non-discriminating": lambda truth, rng: rng.random() < (0.55 if truth > 0.5 else 0.45),
}
# The categories that are right for each kind, from its true rates (over, under) and
# discrimination Delta = (1 - under) - over: NON_DISCRIMINATING for Delta under 0.25, and each
# flag whose true rate is above its threshold (random following at 0.5 overrides half of the
# advice it should follow: UNDERTRUSTING is true of it too).
TRUE_RATES = {
    "calibrated": (0.0, 0.0),
    "random 0.3": (0.3, 0.7),
    "random 0.5": (0.5, 0.5),
    "random 0.8": (0.8, 0.2),
    "rubber-stamp": (1.0, 0.0),
    "over-truster": (0.8, 0.0),
    "under-truster": (0.0, 0.5),
    "non-discriminating": (0.45, 0.45),
}


def right_categories(over: float, under: float) -> set[str]:
    if over == 0 and under == 0:
        return {measures.CALIBRATED}
    out = set()
    if (1 - under) - over < TH.discrimination or (over > TH.overtrust and under > TH.undertrust):
        out.add(ND)
    if over > TH.overtrust:
        out.add(measures.OVERTRUSTING)
    if under > TH.undertrust:
        out.add(measures.UNDERTRUSTING)
    return out


RIGHT = {kind: right_categories(*rates) for kind, rates in TRUE_RATES.items()}
CATEGORIES = [
    measures.CALIBRATED,
    measures.OVERTRUSTING,
    measures.UNDERTRUSTING,
    ND,
    measures.INSUFFICIENT_DATA,
]


def _advice(condition: str, rng: random.Random) -> tuple[float | None, float, bool]:
    """(the stated confidence or None, the true chance the AI is right, whether the outcome is logged)."""
    if condition == "miscalibrated AI":
        c = rng.uniform(0.02, 0.98)
        return c, expit(1.0 + 0.6 * logit(c)), True  # right more often than it says, and flatter
    if condition == "high confidence":
        c = rng.uniform(0.4, 0.99)
        return c, c, False
    c = rng.uniform(0.02, 0.98)
    if condition == "confidence only":
        return c, c, False
    if condition == "outcome only":
        return None, c, True
    mode = rng.random()  # mixed: 50 % confidence only, 30 % outcome only, 20 % both
    return (c if mode < 0.5 or mode >= 0.8 else None), c, mode >= 0.5


def reviewer(kind: str, condition: str, rng: random.Random, n: int = DECISIONS) -> list[measures.Record]:
    out = []
    for _ in range(n):
        stated, truth, logged = _advice(condition, rng)
        followed = KINDS[kind](truth, rng)
        outcome = ("approve" if rng.random() < truth else "deny") if logged else None
        values = {"ai_recommendation": "approve", "user_decision": "approve" if followed else "deny"}
        category = measures.record_category(**values, confidence=stated, outcome=outcome)
        out.append(
            measures.Record(
                **values, confidence=stated, outcome=outcome, initial_decision=None, category=category
            )
        )
    return out


def _check(records: list[measures.Record]) -> dict:
    pairs = Counter(
        (r.confidence, int(r.outcome == r.ai_recommendation))
        for r in records
        if r.confidence is not None and r.outcome is not None
    )
    return confidence.confidence_check((c, y, k) for (c, y), k in pairs.items())


def organisation(
    condition: str, seed: str
) -> tuple[dict, list[list[measures.Record]], measures.Recalibrate | None]:
    """Every kind's reviewers under one condition, as one organisation: their categories, the
    records, and the organisation's recalibration (when its confidence check rejects)."""
    rng = random.Random(seed)
    people = {kind: [reviewer(kind, condition, rng) for _ in range(REVIEWERS)] for kind in KINDS}
    recalibrate = confidence.recalibration_of(_check([r for rs in people.values() for p in rs for r in p]))
    found = {
        kind: Counter(
            measures.figures(
                measures.add_sums(measures.contribution(r, recalibrate) for r in records),
                TH,
                recalibrated=recalibrate is not None,
            )["category"]
            for records in group
        )
        for kind, group in people.items()
    }
    return found, [p for rs in people.values() for p in rs], recalibrate


CONDITIONS = ["confidence only", "high confidence", "outcome only", "mixed", "miscalibrated AI"]


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, Counter]]:
    return {condition: organisation(condition, f"sim-{condition}")[0] for condition in CONDITIONS}


def render(table: dict[str, dict[str, Counter]]) -> str:
    head = "| logging | reviewer | " + " | ".join(CATEGORIES) + " |"
    rows = [head, "|" + "---|" * (len(CATEGORIES) + 2)]
    for condition, kinds in table.items():
        for kind, counts in kinds.items():
            rows.append(f"| {condition} | {kind} | " + " | ".join(str(counts[c]) for c in CATEGORIES) + " |")
    return "\n".join(rows)


def test_the_reference_prints_this_simulations_table(table):
    text = DOC.read_text()
    block = f"{BEGIN}\n{render(table)}\n{END}"
    start, end = text.index(BEGIN), text.index(END) + len(END)
    if os.environ.get("REGENERATE_DOCS"):
        DOC.write_text(text[:start] + block + text[end:])
    assert text[start:end] == block, (
        "docs/reference/calibration.md's table differs: run with REGENERATE_DOCS=1"
    )


def test_each_kind_gets_its_category_and_no_calibrated_reviewer_is_flagged(table):
    for condition, kinds in table.items():
        calibrated = kinds["calibrated"]
        # Never flagged, under any logging: outcome-only data carry no stake weight, and a
        # miscalibrated confidence is recalibrated before it judges.
        assert calibrated[measures.OVERTRUSTING] + calibrated[ND] + calibrated[measures.UNDERTRUSTING] == 0, (
            condition,
            calibrated,
        )
        if condition == "outcome only":
            # Without a confidence reliance cannot be judged: no reviewer gets a flag or a verdict.
            assert all(set(c) == {measures.INSUFFICIENT_DATA} for c in kinds.values()), kinds
            continue
        for kind, counts in kinds.items():
            right = sum(counts[c] for c in RIGHT[kind])
            wrong_flags = sum(
                n for c, n in counts.items() if c not in RIGHT[kind] and c != measures.INSUFFICIENT_DATA
            )
            assert wrong_flags <= 1, (condition, kind, counts)
            # The recalibrated confidence of a miscalibrated AI leaves less stake to judge by: a few
            # more reviewers stay INSUFFICIENT_DATA (never wrongly flagged, above), so the share
            # read right is held to 80 % there (25 of 30 in the seeded run: 21 + 4, 5 undecided).
            share = 0.8 if condition == "miscalibrated AI" else 0.85
            if condition != "high confidence":
                assert right >= share * REVIEWERS, (condition, kind, counts)
    # A confident AI leaves little advice to override: the over-trusters are still flagged mostly.
    high = table["high confidence"]
    assert sum(high["rubber-stamp"][c] for c in FLAGGED_OVER) >= 0.5 * REVIEWERS
    assert high["calibrated"][measures.CALIBRATED] >= 0.5 * REVIEWERS


def test_follow_rate_alone_does_not_decide_non_discriminating(table):
    # Random following at 0.3, 0.5 and 0.8 is told apart by its discrimination (0), not its follow
    # rate: NON_DISCRIMINATING whatever the rate.
    for rate in ("random 0.3", "random 0.5", "random 0.8"):
        assert table["confidence only"][rate][ND] >= 0.9 * REVIEWERS


def test_an_all_calibrated_outcome_only_organisation_is_never_non_compliant():
    for seed in range(20):
        rng = random.Random(f"org-{seed}")
        people = [reviewer("calibrated", "outcome only", rng, n=50) for _ in range(20)]
        per_user = [measures.add_sums(measures.contribution(r) for r in p) for p in people]
        sums = measures.add_sums(per_user)
        over = measures.Clusters.of((u["fwo_sum"], u["wo_sum"]) for u in per_user)
        under = measures.Clusters.of((u["uwu_sum"], u["wu_sum"]) for u in per_user)
        org = measures.figures(sums, TH, over_clusters=over, under_clusters=under)
        org["counts"] = {
            "overtrust": int(sums["overtrust"]),
            "followed_ai_errors": int(sums["oo_followed_wrong"]),
        }
        users = [{"user_id": f"u{i}", **measures.figures(u, TH)} for i, u in enumerate(per_user)]
        status, reason = compliance_status(org=org, users=users, open_serious=[], rubber_stampers=0)
        assert status != NON_COMPLIANT
        assert status == "INSUFFICIENT_EVIDENCE" and "without the AI's stated confidence" in reason, reason
        assert org["followed_ai_errors"] > 0 and org["automation_bias_incidents"] == 0


def test_the_miscalibrated_ai_is_found_and_recalibrated():
    _, records, recalibrate = organisation("miscalibrated AI", "sim-miscalibrated AI")
    check = _check([r for p in records for r in p])
    assert check["verdict"] == "miscalibrated" and check["lr_p_value"] < 1e-6
    assert check["intercept"] == pytest.approx(1.0, abs=0.2) and check["slope"] == pytest.approx(0.6, abs=0.1)
    assert recalibrate is not None


def test_stationary_trends_name_a_direction_about_5_percent_of_the_time_at_most():
    # Twelve monthly periods of reviewers whose behaviour never changes: a direction named is a
    # false one.
    rng = random.Random("stationary")
    named, runs = 0, 200
    for _ in range(runs):
        kind = rng.choice(list(KINDS))
        periods = [reviewer(kind, "mixed", rng, n=rng.randint(20, 60)) for _ in range(12)]
        sums = [measures.add_sums(measures.contribution(r) for r in p) for p in periods]
        pi = measures.accuracy(measures.add_sums(sums))
        points = [measures.figures(s, TH, pi=pi, skill=False) for s in sums]
        direction = trend_summary(points, [True] * len(points))["direction"]
        named += direction in ("improving", "declining")
    assert named / runs <= 0.08, named / runs  # 5 % expected; the binomial error of 200 runs is 1.5 points
