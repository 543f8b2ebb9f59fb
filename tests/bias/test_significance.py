"""The tests of bias detection (docs/reference/bias.md, Significance) against independent libraries:
Fisher's exact test against scipy.stats.fisher_exact, the z-test against statsmodels'
proportions_ztest, Benjamini-Hochberg against statsmodels' multipletests(method="fdr_bh")."""

import random

import numpy as np
import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from bias.significance import benjamini_hochberg, compare, fisher_exact_p, needs_exact_test, z_test_p


def scipy_p(x1: int, n1: int, x2: int, n2: int) -> float:
    return float(fisher_exact([[x1, n1 - x1], [x2, n2 - x2]], alternative="two-sided").pvalue)


def test_fisher_matches_scipy_on_every_table_up_to_8_per_group():
    for n1 in range(1, 9):
        for n2 in range(1, 9):
            for x1 in range(n1 + 1):
                for x2 in range(n2 + 1):
                    assert fisher_exact_p(x1, n1, x2, n2) == pytest.approx(
                        scipy_p(x1, n1, x2, n2), rel=1e-12, abs=1e-300
                    ), (x1, n1, x2, n2)


def test_fisher_matches_scipy_on_random_tables_of_every_size():
    rng = random.Random(27)
    for _ in range(600):
        n1 = rng.choice([rng.randint(1, 40), rng.randint(30, 400), rng.randint(200, 5000)])
        n2 = rng.choice([rng.randint(1, 40), rng.randint(30, 400), rng.randint(200, 5000)])
        rate = rng.random()
        x1 = sum(rng.random() < rate for _ in range(n1)) if n1 < 500 else int(rng.random() * (n1 + 1))
        x2 = (
            sum(rng.random() < rate + rng.uniform(-0.2, 0.2) for _ in range(n2))
            if n2 < 500
            else int(rng.random() * (n2 + 1))
        )
        expected = scipy_p(x1, n1, x2, n2)
        assert fisher_exact_p(x1, n1, x2, n2) == pytest.approx(expected, rel=1e-9, abs=1e-300), (
            x1,
            n1,
            x2,
            n2,
        )


def test_fisher_counts_tables_as_probable_as_the_observed_one_on_both_sides():
    # Equal groups: the table mirrored is exactly as probable, so it is in the p-value (a tie that
    # floating-point logarithms could miss, and scipy's 1e-14 tolerance keeps).
    for n in (10, 50, 333, 1000):
        for x1, x2 in ((0, n // 3), (n // 5, n // 2), (1, n - 1)):
            assert fisher_exact_p(x1, n, x2, n) == pytest.approx(scipy_p(x1, n, x2, n), rel=1e-12)
            assert fisher_exact_p(x1, n, x2, n) == fisher_exact_p(x2, n, x1, n)


def test_one_against_fifty_two_gives_the_exact_0_019_not_the_z_tests_3e_13():
    assert fisher_exact_p(0, 1, 52, 52) == pytest.approx(0.018868, abs=1e-6)
    assert fisher_exact_p(0, 1, 52, 52) == pytest.approx(scipy_p(0, 1, 52, 52), rel=1e-15)
    assert z_test_p(0, 1, 52, 52) == pytest.approx(3.3e-13, rel=0.02)  # what the z-test claimed


def test_fisher_of_an_empty_margin_is_one():
    assert fisher_exact_p(0, 10, 0, 20) == 1.0
    assert fisher_exact_p(10, 10, 20, 20) == 1.0
    assert scipy_p(0, 10, 0, 20) == 1.0


def test_z_test_matches_statsmodels_pooled_two_proportion_test():
    rng = random.Random(7)
    for _ in range(300):
        n1, n2 = rng.randint(30, 3000), rng.randint(30, 3000)
        x1, x2 = rng.randint(1, n1 - 1), rng.randint(1, n2 - 1)
        _, expected = proportions_ztest([x1, x2], [n1, n2], alternative="two-sided")
        assert z_test_p(x1, n1, x2, n2) == pytest.approx(float(expected), rel=1e-9, abs=1e-300)


def test_the_exact_test_is_chosen_for_small_groups_and_small_expected_counts():
    assert needs_exact_test(10, 29, 50, 100)  # a group under 30
    assert needs_exact_test(1, 100, 3, 100)  # 4 favourable of 200: expected 2 per group
    assert not needs_exact_test(5, 100, 5, 100)  # expected exactly 5: the z-test
    assert needs_exact_test(5, 100, 4, 100)  # expected 4.5
    assert needs_exact_test(96, 100, 95, 100)  # the other column is the small one
    assert not needs_exact_test(40, 100, 60, 100)
    assert compare(40, 100, 60, 100).test == "z_test"
    assert compare(10, 29, 50, 100).test == "fisher_exact"


def test_a_group_under_5_is_not_tested():
    result = compare(0, 4, 52, 52)
    assert (result.testable, result.test, result.p_value) == (False, None, None)
    assert compare(0, 5, 52, 52).testable
    assert compare(0, 52, 0, 4).p_value is None


def test_benjamini_hochberg_matches_statsmodels_fdr_bh():
    rng = np.random.default_rng(95)
    for size in (1, 2, 3, 5, 12, 40, 200):
        for _ in range(30):
            p = rng.uniform(0, 1, size) ** rng.uniform(0.5, 4)
            p[rng.uniform(0, 1, size) < 0.2] = 1.0  # ties, and p-values of exactly 1
            if size > 2:
                p[1] = p[0]
            _, expected, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
            assert benjamini_hochberg([float(v) for v in p]) == pytest.approx(list(expected), rel=1e-15)


def test_benjamini_hochberg_by_hand():
    # ranks 1..4 of 4: 0.01*4/1 = 0.04, 0.02*4/2 = 0.04, 0.03*4/3 = 0.04, 0.5*4/4 = 0.5
    assert benjamini_hochberg([0.5, 0.03, 0.01, 0.02]) == pytest.approx([0.5, 0.04, 0.04, 0.04])
    assert benjamini_hochberg([]) == []


def test_a_larger_family_counts_the_untested_hypotheses_as_p_values_of_one():
    rng = np.random.default_rng(3)
    for size, family in ((1, 3), (4, 6), (10, 45)):
        p = list(rng.uniform(0, 0.05, size))
        _, expected, _, _ = multipletests(p + [1.0] * (family - size), method="fdr_bh")
        assert benjamini_hochberg(p, family_size=family) == pytest.approx(list(expected[:size]), rel=1e-15)
