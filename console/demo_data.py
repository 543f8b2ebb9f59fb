"""The demo dataset of `seed_demo`, generated (deterministically) as the POST /log bodies a loan
desk would send: a loan-approval model, 36 reviewers (calibrated ones, over-trusters and
under-trusters, each behaving as the name says: see `_follows`), three subgroup attributes, and
under-trusters whose overrides lean on the applicant's group, widening the model's gender gap in
the recent month and its age gaps in the older one (human-amplified disparities).

Two model versions tell a story over two months of 30 UTC days (`months`). 2.2 (the older month)
was unsure and often wrong, and those loans' outcomes are known; its confidence understated how
often it was right (its odds were OLD_UNDERSTATEMENT times those it stated), so the service's
confidence check rejects it and judges reliance against the recalibrated confidence. 2.3 (the
recent month, ending today) is better, its confidence is calibrated, and its loans have no outcome
yet. Every reviewer decides by how likely the advice is right (the truth the recalibration
recovers), so calibrated reviewers read CALIBRATED in both months and over-trusters are flagged
(README, "seed_demo"; tests/console/test_demo_readme.py)."""

import datetime as dt
import math
import random
from dataclasses import dataclass

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
# The share of cases on which the AI's advice is more likely wrong than right (older month, recent
# month): enough of them that each reviewer's over-trust can be judged within a month.
UNSURE_SHARE_OLD, UNSURE_SHARE = 0.38, 0.25
OLD_UNDERSTATEMENT = 2.0
SHARPNESS = 15.0  # how sharply a calibrated reviewer's following turns at even odds (see _follows)
REVIEWERS = [("over-trusting", 6), ("under-trusting", 12), ("calibrated", 18)]
# The under-trusters' own lean per group, applied for each of an applicant's groups in turn: a
# negative lean turns an approval into a denial with that probability, a positive one a denial into
# an approval. Only they lean: a lean that moves a confident AI's advice is under-trust, and a
# reviewer who has it cannot read CALIBRATED. A third of the desk deciding by group gives
# amplification scores of about 0.1-0.3 (low and medium); higher ones need most of the desk.
HUMAN_LEAN = {
    # The recent month's under-trusters decide by the applicant's gender.
    "2.3": {("gender", "male"): 1.0, ("gender", "female"): -1.0},
    # The older month's were harsher on older and on young applicants, and on black applicants.
    "2.2": {
        ("ethnicity", "white"): 0.3,
        ("ethnicity", "black"): -1.0,
        ("age_group", "35-54"): 0.4,
        ("age_group", "55+"): -1.0,
        ("age_group", "18-34"): -0.6,
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


def decisions(*, now: dt.datetime) -> list[dict[str, object]]:
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
            likely = _likely_right(rng, old)
            lean = sum(MODEL_LEAN.get(item, 0.0) for item in subgroups.items())
            repays = rng.random() < 0.62
            right = rng.random() < min(max(likely + lean * (1 if repays else -1), 0.0), 1.0)
            ai = ("approve" if repays else "deny") if right else ("deny" if repays else "approve")
            confidence = _stated(likely, old)
            reviewer = rng.choice(staff)
            follow = rng.random() < _follows(reviewer.profile, likely)
            human = ai if follow else ("deny" if ai == "approve" else "approve")
            if reviewer.profile == "under-trusting":
                human = _lean(rng, human, subgroups, version)
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


def _likely_right(rng: random.Random, old: bool) -> float:
    """How likely the AI's advice on a case is right: the truth its confidence should state."""
    if rng.random() < (UNSURE_SHARE_OLD if old else UNSURE_SHARE):
        return rng.uniform(0.08, 0.5)
    return rng.uniform(0.55, 0.95) if old else rng.uniform(0.6, 0.98)


def _stated(likely: float, old: bool) -> float:
    """The confidence the AI states: v2.3's is calibrated; v2.2 understated itself (its odds of
    being right were OLD_UNDERSTATEMENT times those it stated)."""
    c = likely
    if old:
        c = 1 / (1 + math.exp(-(math.log(likely / (1 - likely)) - math.log(OLD_UNDERSTATEMENT))))
    return round(min(max(c, 0.02), 0.99), 2)


def _follows(profile: str, likely: float) -> float:
    """The probability that a reviewer of this profile follows advice that is right with
    probability `likely` (docs/reference/calibration.md, Rates)."""
    if profile == "calibrated":  # follows where the AI is more likely right, errs only near 0.5
        return 1 / (1 + math.exp(-SHARPNESS * (likely - 0.5)))
    if profile == "over-trusting":  # follows whatever the AI says (automation bias)
        return 0.97
    return 0.45 if likely > 0.5 else 0.10  # under-trusting: overrides even a confident AI
