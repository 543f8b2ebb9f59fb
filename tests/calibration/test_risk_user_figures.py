"""The risk users' figures (docs/reference/calibration.md, Risk users) computed alone give what
the full figures give: the same users, the same values to the bit."""

import random

import pytest

from calibration import rules
from calibration.selectors import RISK_USER_KEYS


def reviewer_sums(
    rng: random.Random, decisions: int, follow_base: float, follow_slope: float
) -> dict[str, float]:
    sums = dict.fromkeys(rules.SUM_FIELDS, 0)
    for _ in range(decisions):
        confidence = rng.random() if rng.random() < 0.8 else None
        followed = rng.random() < follow_base + follow_slope * (confidence if confidence is not None else 0.5)
        outcome = None
        if rng.random() < 0.4:
            outcome = "approve" if rng.random() < (confidence or 0.7) else "deny"
        decision = "approve" if followed else "deny"
        category = rules.record_category(
            ai_recommendation="approve", user_decision=decision, confidence=confidence, outcome=outcome
        )
        record = rules.Record("approve", decision, confidence, outcome, None, category)
        for name, value in rules.contribution(record).items():
            sums[name] += value
    return sums


@pytest.mark.parametrize("seed", range(4))
def test_a_risk_users_figures_are_those_of_the_full_figures(seed):
    rng = random.Random(seed)
    th = rules.thresholds()
    judged = {True: 0, False: 0}
    for _ in range(150):
        decisions = rng.choice([0, 5, 29, 30, 31, 60, 200])
        sums = reviewer_sums(rng, decisions, rng.random() * 0.7, rng.uniform(-0.3, 1.0))
        full = rules.figures(sums, th=th)
        alone = rules.risk_user_figures(sums, th)
        if rules.is_risk_user(full, th):
            judged[True] += 1
            assert alone is not None
            assert list(alone) == list(RISK_USER_KEYS)
            assert alone == {key: full[key] for key in RISK_USER_KEYS}
        else:
            judged[False] += 1
            assert alone is None
        # the sums it names are all it reads
        named = {name: sums[name] for name in rules.RISK_USER_FIELDS}
        assert rules.risk_user_figures(named, th) == alone
    assert judged[True] and judged[False]  # both kinds of reviewer were judged
