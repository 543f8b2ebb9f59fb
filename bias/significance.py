"""The significance tests of bias detection (docs/reference/bias.md, Significance): Fisher's exact
test, the pooled two-proportion z-test, the rule that picks one of them, and the
Benjamini-Hochberg adjustment over one analysis. Pure functions of counts.

Fisher's exact test is written here, not taken from scipy, because scipy is a development
dependency only (the tests check this code against scipy.stats.fisher_exact)."""

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from bias.domain import MIN_GROUP_SIZE  # under 30 in either group: the exact test (and at most low)

MIN_TESTABLE = 5  # a group under 5 decisions is not tested at all
MIN_EXPECTED = 5  # an expected cell count under 5: the exact test
# scipy's relative tolerance for "as probable as the observed table" (1 + 1e-14), as an exact
# fraction so that two tables of mathematically equal probability always tie.
_TIE = Fraction(10**14 + 1, 10**14)

TestName = Literal["fisher_exact", "z_test"]


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing two groups' rates x1/n1 and x2/n2."""

    testable: bool
    test: TestName | None
    p_value: float | None


def _hypergeometric_weights(x1: int, n1: int, x2: int, n2: int) -> tuple[list[int], int]:
    """The tables with the margins of [[x1, n1 - x1], [x2, n2 - x2]], as the integers
    C(n1, k) * C(n2, m - k) (m = x1 + x2) for every k of the support, and the index of the
    observed table. Each is the hypergeometric probability of its table times C(n1 + n2, m).
    Integers (Python's are unbounded) instead of logarithms of gamma functions: exact, so ties
    are ties, and the ratio of neighbours keeps the cost at one small product per table."""
    m = x1 + x2
    low, high = max(0, m - n2), min(m, n1)
    weight = math.comb(n1, low) * math.comb(n2, m - low)
    weights = [weight]
    for k in range(low, high):
        # C(n1, k+1) C(n2, m-k-1) = C(n1, k) C(n2, m-k) * (n1-k)(m-k) / ((k+1)(n2-m+k+1)), exactly.
        weight = weight * (n1 - k) * (m - k) // ((k + 1) * (n2 - m + k + 1))
        weights.append(weight)
    return weights, x1 - low


def fisher_exact_p(x1: int, n1: int, x2: int, n2: int) -> float:
    """Two-sided p-value of Fisher's exact test for the 2x2 table [[x1, n1 - x1], [x2, n2 - x2]]:
    the probability, given the margins, of every table at most as probable as the observed one
    (within a relative 1e-14, as scipy.stats.fisher_exact decides it). 1.0 when a row or a
    column is empty, or when the observed table is the most probable one."""
    if n1 <= 0 or n2 <= 0 or x1 + x2 in (0, n1 + n2):
        return 1.0
    weights, observed = _hypergeometric_weights(x1, n1, x2, n2)
    threshold = weights[observed] * _TIE
    extreme = sum(w for w in weights if w <= threshold)
    return min(extreme / sum(weights), 1.0)  # int / int rounds once, correctly


def z_test_p(x1: int, n1: int, x2: int, n2: int) -> float | None:
    """Two-sided pooled two-proportion z-test. None when a sample is empty; 1.0 when the
    pooled proportion is 0 or 1 (no variance: the rates are equal)."""
    if n1 <= 0 or n2 <= 0:
        return None
    pooled = (x1 + x2) / (n1 + n2)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if variance <= 0:
        return 1.0
    z = (x1 / n1 - x2 / n2) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2))


def needs_exact_test(x1: int, n1: int, x2: int, n2: int) -> bool:
    """Fisher's exact test when either group has fewer than 30 or any expected cell count of
    the 2x2 table is under 5; else the z-test is accurate enough."""
    if min(n1, n2) < MIN_GROUP_SIZE:
        return True
    total, hits = n1 + n2, x1 + x2
    # expected cell = row total * column total / total; compared without division
    smallest_row, smallest_column = min(n1, n2), min(hits, total - hits)
    return smallest_row * smallest_column < MIN_EXPECTED * total


def compare(x1: int, n1: int, x2: int, n2: int) -> Comparison:
    """The test of docs/reference/bias.md, Significance, for rates x1/n1 and x2/n2: none when
    either group has fewer than 5, else Fisher's exact test or the z-test."""
    if min(n1, n2) < MIN_TESTABLE:
        return Comparison(testable=False, test=None, p_value=None)
    if needs_exact_test(x1, n1, x2, n2):
        return Comparison(testable=True, test="fisher_exact", p_value=fisher_exact_p(x1, n1, x2, n2))
    return Comparison(testable=True, test="z_test", p_value=z_test_p(x1, n1, x2, n2))


def benjamini_hochberg(p_values: list[float], *, family_size: int | None = None) -> list[float]:
    """Benjamini-Hochberg (1995) adjusted p-values (q-values), in the order given: the p-value
    of rank i (ascending) times m / i, made monotone from the largest rank down, at most 1. The
    same arithmetic as statsmodels' multipletests(method="fdr_bh"). `family_size` m, when larger
    than the number of p-values, counts hypotheses that were not tested as never rejected (the
    same as p-values of 1 added to the list)."""
    m = max(len(p_values), family_size or 0)
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    q = [0.0] * len(p_values)
    running = 1.0
    for rank in range(len(p_values), 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] / (rank / m))
        q[index] = running
    return q
