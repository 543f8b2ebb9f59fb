"""The confidence check as the reports print it (docs/reference/calibration.md, A miscalibrated
confidence): a rejected confidence says that reliance was judged against the recalibrated one."""

from compliance import confidence_print


def test_a_miscalibrated_verdict_says_reliance_was_judged_against_the_recalibrated_confidence():
    text = confidence_print.verdict({"verdict": "miscalibrated", "intercept": 2.1, "slope": 0.9})
    assert text.startswith("miscalibrated: reliance was judged against the recalibrated confidence")
    assert confidence_print.verdict({"verdict": "consistent"}) != text
