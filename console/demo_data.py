"""The demo dataset of `seed_demo`, generated (deterministically) as the POST /log bodies a loan
desk would send: a loan-approval model, 36 reviewers of whom some over-trust and some under-trust it,
three subgroup attributes, and reviewers who widen the model's gender gap (a human-amplified
disparity), more mildly on ethnicity and age.

Two model versions tell a story over two months of 30 UTC days (`months`): 2.2 (the older month)
was unsure and often wrong, and those loans' outcomes are known: its over-trusting reviewers
follow it where it rates itself more likely wrong (what the month's report names them for; its
status is the README's); 2.3 (the recent month, ending today) is better and its loans have no
outcome yet."""

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any

CUSTOMER = "demo-bank"
MODEL = "loan-approval"
# Its system profile (docs/reference/system-profiles.md), the provider left out so that the reports
# show how a field not provided is printed.
PROFILE = {
    "name": "Consumer loan approval assistant",
    "purpose": (
        "Recommends approving or declining consumer loan applications, with its confidence that the "
        "applicant will repay."
    ),
    "deployment_context": (
        "The bank's branch loan desks: every recommendation is reviewed by a loan officer before the "
        "decision takes effect; outcomes are recorded when a loan is repaid or defaults."
    ),
    "provider": "",
    "version": "2.3",
    "intended_reviewers": "Loan officers of the branch desks, trained on the bank's credit policy.",
}
DAYS = 60
MONTH_DAYS = 30  # the demo's two months: the older (model 2.2) and the recent one (model 2.3), ending today
PER_DAY = 55
SEED = 2026
GENDERS = (("male", 0.5), ("female", 0.5))
AGE_GROUPS = (("18-34", 0.35), ("35-54", 0.4), ("55+", 0.25))
ETHNICITIES = (("white", 0.6), ("black", 0.2), ("hispanic", 0.2))
# Reviewer profiles: how often they follow the AI when it rates its advice more likely right
# (confidence over 0.5) and when it rates it more likely wrong (docs/reference/calibration.md, Rates).
PROFILES = {
    "over-trusting": (0.98, 0.95),  # follows whatever the AI says (automation bias)
    "under-trusting": (0.45, 0.10),  # overrides even a confident AI (algorithm aversion)
    "calibrated": (0.93, 0.10),  # follows the AI where it is more likely right, rarely where it is not
}
REVIEWERS = [("over-trusting", 8), ("under-trusting", 6), ("calibrated", 22)]
# The reviewers' own lean per group, applied for each of an applicant's groups in turn: a negative
# lean turns an approval into a denial with that probability, a positive one a denial into an approval.
HUMAN_LEAN = {
    # The desk of the recent month widens the model's gender gap (critical amplification: a score
    # of 0.75 or more needs the humans' gap to exceed the model's by three quarters of the room left).
    "2.3": {("gender", "male"): 0.75, ("gender", "female"): -0.85},
    # The desk of the older month was harsher on older applicants (high), on black applicants
    # (medium) and a little on young ones (low): gaps of tens of points, as real desks show.
    "2.2": {
        ("ethnicity", "white"): 0.2,
        ("ethnicity", "black"): -0.9,
        ("age_group", "35-54"): 0.3,
        ("age_group", "55+"): -0.93,
        ("age_group", "18-34"): -0.16,
    },
}
LEAN_ORDER = ("ethnicity", "age_group", "gender")
# The model's own lean: how much more often it is right in the applicant's favour, per group. The
# disparity the fairness tool reports.
MODEL_LEAN = {("gender", "male"): 0.06, ("gender", "female"): -0.06, ("ethnicity", "white"): 0.04,
              ("ethnicity", "black"): -0.04, ("age_group", "35-54"): 0.03, ("age_group", "55+"): -0.03,
              ("age_group", "18-34"): -0.03}  # fmt: skip
CONTEXTS = ("personal loan", "car loan", "small business loan", "mortgage top-up", "credit line increase")


@dataclass(frozen=True)
class Reviewer:
    user_id: str
    profile: str


def months(now: dt.datetime) -> tuple[tuple[dt.date, dt.date], tuple[dt.date, dt.date]]:
    """The (first day, last day) of the older month and of the recent one, UTC days."""
    today = now.astimezone(dt.UTC).date()
    recent = (today - dt.timedelta(days=MONTH_DAYS - 1), today)
    older = (today - dt.timedelta(days=DAYS - 1), today - dt.timedelta(days=MONTH_DAYS))
    return older, recent


def reviewers() -> list[Reviewer]:
    out, n = [], 0
    for profile, count in REVIEWERS:
        for _ in range(count):
            n += 1
            out.append(Reviewer(f"officer-{n:02d}", profile))
    return out


def _pick(rng: random.Random, options: tuple[tuple[str, float], ...]) -> str:
    return rng.choices([o for o, _ in options], weights=[w for _, w in options])[0]


def _lean(rng: random.Random, decision: str, subgroups: dict[str, str], version: str) -> str:
    for attribute in LEAN_ORDER:
        lean = HUMAN_LEAN[version].get((attribute, subgroups[attribute]), 0.0)
        if decision == "approve" and rng.random() < -lean:
            decision = "deny"
        elif decision == "deny" and rng.random() < lean:
            decision = "approve"
    return decision


def decisions(*, now: dt.datetime) -> list[dict[str, Any]]:
    """The POST /log bodies, oldest first, with deterministic decision ids (a replay is harmless)."""
    rng = random.Random(SEED)
    staff = reviewers()
    bodies = []
    today = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    for day in range(DAYS - 1, -1, -1):
        old = day >= MONTH_DAYS
        version = "2.2" if old else "2.3"
        # Each decision on its calendar day (UTC), so the months' dates are exact; today's so far.
        span = 86_000 if day else max(int((now - today).total_seconds()) - 60, 1)
        for i in range(PER_DAY):
            at = today - dt.timedelta(days=day) + dt.timedelta(seconds=int(rng.random() * span))
            subgroups = {
                "gender": _pick(rng, GENDERS),
                "age_group": _pick(rng, AGE_GROUPS),
                "ethnicity": _pick(rng, ETHNICITIES),
            }
            repays = rng.random() < 0.62
            lean = sum(MODEL_LEAN.get(item, 0.0) for item in subgroups.items())
            right = rng.random() < (0.67 if old else 0.84) + lean * (1 if repays else -1)
            ai = ("approve" if repays else "deny") if right else ("deny" if repays else "approve")
            confidence = rng.uniform(0.5, 0.97) if right else rng.uniform(0.25, 0.65)
            if old:
                confidence -= 0.12
            confidence = round(min(max(confidence, 0.05), 0.99), 2)
            reviewer = rng.choice(staff)
            confident, unsure = PROFILES[reviewer.profile]
            follow = rng.random() < (confident if confidence > 0.5 else unsure)
            own = ai if follow else ("deny" if ai == "approve" else "approve")
            human = _lean(rng, own, subgroups, version)
            if reviewer.profile == "over-trusting" and confidence <= 0.5:
                human = own  # who follows whatever the AI says adds no lean of their own where it is unsure
            body = {
                "decision_id": f"demo-{version}-{DAYS - day:02d}-{i:03d}",
                "user_id": reviewer.user_id,
                "model_id": MODEL,
                "model_version": version,
                "ai_recommendation": ai,
                "ai_confidence": confidence,
                "user_decision": human,
                "context": rng.choice(CONTEXTS),
                "subgroups": subgroups,
                "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            }
            if old:  # loans decided more than a month ago: repaid or not is known
                body["outcome"] = "approve" if repays else "deny"
            bodies.append(body)
    bodies.sort(key=lambda b: str(b["timestamp"]))
    return bodies
