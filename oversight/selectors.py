"""The oversight figures of a customer over a window (docs/reference/oversight.md): review
effort (how long reviewers looked, and who agrees with the AI without looking) and vigilance
(how reviewers do on probes, cases whose right answer is known). The counts come from
audit.selectors, grouped in SQL; the statistics are oversight.rules on those few rows."""

import datetime as dt
from dataclasses import dataclass
from typing import TypedDict

from audit import selectors as audit_selectors
from audit.selectors import Narrow, UserReviewCounts
from keys.models import Customer
from oversight import rules
from oversight.models import RubberStampState


class ModelTimes(TypedDict):
    """A model's review times in GET /oversight/review-effort."""

    model_id: str | None
    timed_decisions: int
    median_review_seconds: float | None
    threshold_seconds: float | None


class QuickAgreement(TypedDict):
    """What a reviewer and the team share: how many decisions, how many timed and quick."""

    decisions: int
    timed_decisions: int
    quick_decisions: int
    quick_agreements: int
    quick_agreement_rate: float | None
    quick_agreement_rate_ci: list[float] | None


class ReviewerEffort(QuickAgreement):
    """A reviewer's row in GET /oversight/review-effort."""

    user_id: str
    median_review_seconds: float | None
    overreliance_when_quick: float | None
    overreliance_when_considered: float | None
    flagged: bool


class TeamEffort(QuickAgreement):
    """The team's figures, naming no one."""

    reviewers: int
    flagged_reviewers: int
    timed_share: float | None


@dataclass(frozen=True)
class ReviewEffort:
    models: list[ModelTimes]
    users: list[ReviewerEffort]  # flagged first, then by quick_agreement_rate descending

    @property
    def flagged(self) -> int:
        return sum(1 for user in self.users if user["flagged"])

    def team(self) -> TeamEffort:
        """The team's figures without naming anyone: what the console shows to every officer."""
        decisions = sum(u["decisions"] for u in self.users)
        timed = sum(u["timed_decisions"] for u in self.users)
        quick = sum(u["quick_decisions"] for u in self.users)
        agreements = sum(u["quick_agreements"] for u in self.users)
        return {
            "reviewers": len(self.users),
            "flagged_reviewers": self.flagged,
            "decisions": decisions,
            "timed_decisions": timed,
            "timed_share": rules.rounded(rules.rate(timed, decisions)),
            "quick_decisions": quick,
            "quick_agreements": agreements,
            "quick_agreement_rate": rules.rounded(rules.rate(agreements, timed)),
            "quick_agreement_rate_ci": rules.wilson_rounded(agreements, timed),
        }


def review_effort(
    customer: Customer,
    *,
    since: dt.datetime,
    until: dt.datetime,
    model_id: Narrow = None,
    user_id: Narrow = None,
) -> ReviewEffort:
    """Per model the median review time and threshold; per reviewer with a real decision in
    [since, until) the quick-agreement figures and whether they are flagged. `model_id` and
    `user_id` narrow to one value or any of a list; the thresholds are the models' over every
    reviewer."""
    times = audit_selectors.review_times_by_model(customer.pk, since=since, until=until, model_id=model_id)
    thresholds = {
        m.model_id: rules.threshold_seconds(timed=m.timed_decisions, median=m.median_review_seconds)
        for m in times
    }
    models = [
        ModelTimes(
            model_id=m.model_id,
            timed_decisions=m.timed_decisions,
            median_review_seconds=rules.rounded(m.median_review_seconds, 3),
            threshold_seconds=rules.rounded(thresholds[m.model_id], 3),
        )
        for m in times
    ]
    counts = audit_selectors.review_counts_by_user(
        customer.pk, since=since, until=until, thresholds=thresholds, model_id=model_id, user_id=user_id
    )
    users = [_user_row(row) for row in counts]
    users.sort(key=lambda u: (not u["flagged"], -(u["quick_agreement_rate"] or -1.0), u["user_id"]))
    return ReviewEffort(models=models, users=users)


def _user_row(row: UserReviewCounts) -> ReviewerEffort:
    interval = rules.wilson(row.quick_agreements, row.timed_decisions)
    flagged = (
        row.timed_decisions >= rules.MIN_TIMED_FOR_FLAG
        and interval is not None
        and interval[0] > rules.FLAG_RATE
    )
    return {
        "user_id": row.user_id,
        "decisions": row.decisions,
        "timed_decisions": row.timed_decisions,
        "median_review_seconds": rules.rounded(row.median_review_seconds, 3),
        "quick_decisions": row.quick_decisions,
        "quick_agreements": row.quick_agreements,
        "quick_agreement_rate": rules.rounded(rules.rate(row.quick_agreements, row.timed_decisions)),
        "quick_agreement_rate_ci": rules.wilson_rounded(row.quick_agreements, row.timed_decisions),
        "overreliance_when_quick": rules.rounded(rules.rate(row.quick_followed_ai_wrong, row.quick_ai_wrong)),
        "overreliance_when_considered": rules.rounded(
            rules.rate(row.considered_followed_ai_wrong, row.considered_ai_wrong)
        ),
        "flagged": flagged,
    }


_PROBE_COUNTS = ["probes", "known_wrong", "caught", "corrected", "known_right", "false_overrides"]


class ProbeFigures(TypedDict):
    """The vigilance figures of a set of probes (a reviewer's, or all of them)."""

    probes: int
    known_wrong: int
    caught: int
    corrected: int
    catch_rate: float | None
    catch_rate_ci: list[float] | None
    known_right: int
    false_overrides: int
    false_override_rate: float | None
    false_override_rate_ci: list[float] | None
    d_prime: float | None
    evidence: str


class ReviewerVigilance(ProbeFigures):
    user_id: str


@dataclass(frozen=True)
class Vigilance:
    totals: ProbeFigures
    users: list[ReviewerVigilance]  # lowest catch_rate first


def vigilance(
    customer: Customer,
    *,
    since: dt.datetime,
    until: dt.datetime,
    model_id: Narrow = None,
    user_id: Narrow = None,
) -> Vigilance:
    """Per reviewer with a probe in [since, until) and over all of them (the same filters):
    catch rate, corrected, false overrides, Wilson intervals, d' and the evidence level."""
    rows = audit_selectors.probe_counts_by_user(
        customer.pk, since=since, until=until, model_id=model_id, user_id=user_id
    )
    users = [ReviewerVigilance(user_id=row.user_id, **probe_figures(vars(row))) for row in rows]
    users.sort(key=lambda u: (u["catch_rate"] is None, u["catch_rate"] or 0.0, u["user_id"]))
    totals = probe_figures({name: sum(getattr(row, name) for row in rows) for name in _PROBE_COUNTS})
    return Vigilance(totals=totals, users=users)


def probe_figures(counts: dict[str, int]) -> ProbeFigures:
    """The vigilance figures of a set of probes from its counts."""
    known_wrong, caught = counts["known_wrong"], counts["caught"]
    known_right, false_overrides = counts["known_right"], counts["false_overrides"]
    return {
        "probes": counts["probes"],
        "known_wrong": known_wrong,
        "caught": caught,
        "corrected": counts["corrected"],
        "catch_rate": rules.rounded(rules.rate(caught, known_wrong)),
        "catch_rate_ci": rules.wilson_rounded(caught, known_wrong),
        "known_right": known_right,
        "false_overrides": false_overrides,
        "false_override_rate": rules.rounded(rules.rate(false_overrides, known_right)),
        "false_override_rate_ci": rules.wilson_rounded(false_overrides, known_right),
        "d_prime": rules.rounded(
            rules.d_prime(
                caught=caught,
                known_wrong=known_wrong,
                false_overrides=false_overrides,
                known_right=known_right,
            )
        ),
        "evidence": rules.evidence(known_wrong),
    }


def rubber_stamp_state(customer: Customer, user_id: str) -> RubberStampState | None:
    """Whether the review-effort check flags the reviewer now, and when oversight.rubber_stamp
    last fired for them."""
    return RubberStampState.objects.filter(customer=customer, user_id=user_id).first()
