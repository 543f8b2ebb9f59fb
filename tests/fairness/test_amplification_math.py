"""The amplification figure (docs/reference/fairness.md) against hand-made counts (no database)."""

import pytest

from bias.selectors import GroupValueCount
from fairness.amplification import analyse, attribute_key, risk_level


def rows(
    group: str,
    total: int,
    ai_yes: int,
    human_yes: int,
    *,
    yes="approve",
    no="deny",
    both_yes: int | None = None,
):
    """`total` decisions of `group`: the AI says yes `ai_yes` times and humans `human_yes` times.
    By default humans say yes where the AI did first (max overlap)."""
    overlap = min(ai_yes, human_yes) if both_yes is None else both_yes
    cells = {
        (yes, yes): overlap,
        (yes, no): ai_yes - overlap,
        (no, yes): human_yes - overlap,
        (no, no): total - ai_yes - human_yes + overlap,
    }
    return [GroupValueCount(group, ai, human, n) for (ai, human), n in cells.items() if n]


def test_reference_worked_example_scores_a_quarter_medium():
    counts = rows("male", 100, 60, 70) + rows("female", 100, 40, 30)
    result = analyse(counts, metric_value=0.2)
    assert result["status"] == "completed"
    assert result["modelDisparityObserved"] == 0.2
    assert result["humanDisparity"] == 0.4
    assert result["amplificationScore"] == 0.25
    assert result["riskLevel"] == "medium"
    assert result["direction"] == "amplifying"
    assert result["groups"]["privileged"]["name"] == "male"
    assert result["groups"]["privileged"]["aiRates"] == {"approve": 0.6, "deny": 0.4}
    assert result["groups"]["unprivileged"]["humanRates"] == {"approve": 0.3, "deny": 0.7}
    assert result["decisionsAnalyzed"] == 200
    assert result["modelDisparityReported"] == 0.2


def test_humans_fully_separating_the_groups_score_one_critical():
    counts = rows("male", 50, 30, 50) + rows("female", 50, 20, 0)
    result = analyse(counts, metric_value=0.2)
    assert result["amplificationScore"] == 1.0
    assert result["riskLevel"] == "critical"


def test_humans_narrowing_the_gap_score_zero_and_mitigate():
    counts = rows("male", 100, 60, 55) + rows("female", 100, 40, 45)
    result = analyse(counts, metric_value=0.2)
    assert result["amplificationScore"] == 0.0
    assert result["riskLevel"] == "none"
    assert result["direction"] == "mitigating"
    assert result["humanDisparity"] == 0.1


def test_humans_copying_the_ai_are_neutral():
    counts = rows("male", 100, 60, 60) + rows("female", 100, 40, 40)
    result = analyse(counts, metric_value=0.2)
    assert (result["amplificationScore"], result["direction"]) == (0.0, "neutral")


def test_fewer_than_30_decisions_in_a_group_is_insufficient_data():
    counts = rows("male", 100, 60, 70) + rows("female", 29, 10, 5)
    result = analyse(counts, metric_value=0.2)
    assert result["status"] == "insufficient_data"
    assert result["amplificationScore"] is None
    assert result["riskLevel"] is None
    assert result["groups"]["unprivileged"]["decisions"] == 29


def test_a_single_group_is_insufficient_data():
    result = analyse(rows("male", 100, 60, 70), metric_value=0.2)
    assert result["status"] == "insufficient_data"
    assert result["groups"]["unprivileged"] == {"name": None, "decisions": 0, "aiRates": {}, "humanRates": {}}


def test_no_decisions_is_insufficient_data():
    result = analyse([], metric_value=0.5, privileged="a", unprivileged="b")
    assert result["status"] == "insufficient_data"
    assert result["groups"]["privileged"]["name"] == "a"
    assert result["decisionsAnalyzed"] == 0


def test_privileged_is_the_group_the_ai_favours_not_the_larger_one():
    counts = rows("female", 200, 60, 50) + rows("male", 100, 70, 80) + rows("other", 40, 20, 20)
    result = analyse(counts, metric_value=0.1)
    assert result["groups"]["privileged"]["name"] == "male"
    assert result["groups"]["unprivileged"]["name"] == "female"


def test_given_groups_are_used_even_when_smaller():
    counts = rows("a", 500, 250, 250) + rows("b", 40, 30, 40) + rows("c", 40, 10, 0)
    result = analyse(counts, metric_value=0.1, privileged="b", unprivileged="c")
    assert result["groups"]["privileged"]["name"] == "b"
    assert result["decisionsAnalyzed"] == 80
    assert result["amplificationScore"] == 1.0


def test_given_group_names_match_case_insensitively():
    counts = rows("Male", 100, 60, 70) + rows("Female", 100, 40, 30)
    result = analyse(counts, metric_value=0.2, privileged="male", unprivileged="female")
    assert result["amplificationScore"] == 0.25


def test_one_given_group_is_paired_with_the_largest_other():
    counts = rows("x", 300, 150, 150) + rows("y", 100, 40, 30) + rows("z", 100, 60, 70)
    result = analyse(counts, metric_value=0.2, privileged="z")
    assert result["groups"]["unprivileged"]["name"] == "x"


def test_outcome_values_are_trimmed_and_case_folded():
    counts = rows("m", 100, 60, 70, yes=" Approve ", no="DENY") + rows(
        "f", 100, 40, 30, yes="approve", no="deny"
    )
    result = analyse(counts, metric_value=0.2)
    assert result["groups"]["privileged"]["aiRates"] == {"approve": 0.6, "deny": 0.4}
    assert result["amplificationScore"] == 0.25


def test_model_disparity_of_one_scores_zero():
    counts = rows("m", 50, 50, 50) + rows("f", 50, 0, 0)
    result = analyse(counts, metric_value=1.0)
    assert result["modelDisparityObserved"] == 1.0
    assert result["amplificationScore"] == 0.0


def test_multi_valued_outcomes_use_half_the_l1_distance():
    # AI: priv 50% a / 50% b, unpriv 30% a / 30% b / 40% c; humans move further apart.
    counts = [
        GroupValueCount("p", "a", "a", 50),
        GroupValueCount("p", "b", "b", 50),
        GroupValueCount("u", "a", "a", 30),
        GroupValueCount("u", "b", "c", 30),
        GroupValueCount("u", "c", "c", 40),
    ]
    result = analyse(counts, metric_value=0.4, privileged="p", unprivileged="u")
    # a = (0.2, 0.2, -0.4): D_ai = 0.4; h = (0.2, 0.5, -0.7): D_h = 0.7
    # A = 1/2 * (0 + 0.3 + 0.3) = 0.3; score = 0.3 / 0.6 = 0.5
    assert result["modelDisparityObserved"] == 0.4
    assert result["humanDisparity"] == 0.7
    assert result["amplificationScore"] == 0.5
    assert result["riskLevel"] == "high"


def test_scores_are_rounded_to_four_decimals():
    counts = rows("m", 300, 180, 190) + rows("f", 300, 120, 111)
    result = analyse(counts, metric_value=0.2)
    assert result["amplificationScore"] == round(((190 - 111) / 300 - 0.2) / 0.8, 4)


@pytest.mark.parametrize(
    ("score", "level"),
    [(0, "none"), (0.0999, "none"), (0.1, "low"), (0.2499, "low"), (0.25, "medium"), (0.4999, "medium"),
     (0.5, "high"), (0.7499, "high"), (0.75, "critical"), (1, "critical")],
)  # fmt: skip
def test_risk_levels_follow_the_interface_bands(score, level):
    from fractions import Fraction

    assert risk_level(Fraction(str(score))) == level


@pytest.mark.parametrize(
    ("given", "key"),
    [("gender", "gender"), ("age_group", "age_group"), ("ethnicity", "ethnicity"), ("region", "custom.region"),
     ("custom.region", "custom.region"), ("race", "custom.race")],
)  # fmt: skip
def test_protected_attribute_maps_to_the_subgroup_attribute(given, key):
    assert attribute_key(given) == key
