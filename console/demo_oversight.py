"""The demo's human-oversight data (docs/reference/oversight.md): review times on the loan desk's
decisions and a probe programme of about 2 % of them, deterministic like the rest of the demo.

Three of the over-trusting reviewers rubber-stamp: when they agree with the AI they spend a second
or three, so the review-effort page flags them; the rest look for half a minute or more. Probes are
known loan files whose AI recommendation is deliberately wrong (or right); careful reviewers catch
most wrong ones, over-trusting ones few, so the vigilance page shows a spread of catch rates."""

import datetime as dt
import math
import random
from typing import Literal, TypedDict

from console import demo_data

SEED = 1814
RUBBER_STAMPERS = 3  # the first over-trusting reviewers
TIMED_SHARE = 0.85  # some desks' workflows do not record when the case was opened
# The older month ran a probe programme: every reviewer met PROGRAMME known cases, PROGRAMME_WRONG
# of them with the AI wrong, enough for a reviewer's probe test to conclude; the recent month
# the usual PROBE_SHARE of its decisions, at random.
PROGRAMME, PROGRAMME_WRONG, PROBE_SHARE = 8, 6, 0.02
# Per profile: probability of catching a known_wrong probe and of overriding a known_right one.
PROBE_BEHAVIOUR = {"over-trusting": (0.2, 0.03), "calibrated": (0.85, 0.08), "under-trusting": (0.9, 0.35)}


class Probe(TypedDict):
    kind: Literal["known_wrong", "known_right"]
    correct_decision: str


class ProbeBody(TypedDict):
    """A probe as POST /log takes it: a known case, logged with the decisions."""

    decision_id: str
    user_id: str
    model_id: str
    model_version: str
    ai_recommendation: str
    ai_confidence: float
    user_decision: str
    context: str
    timestamp: str
    review_seconds: float
    probe: Probe


def _rubber_stampers() -> set[str]:
    over = [r.user_id for r in demo_data.reviewers() if r.profile == "over-trusting"]
    return set(over[:RUBBER_STAMPERS])


def _seconds(rng: random.Random, quick: bool) -> float:
    if quick:
        return round(rng.uniform(0.8, 3.5), 3)
    return round(min(rng.lognormvariate(math.log(45), 0.5), 3600.0), 3)


def _parse(timestamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def timed(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """The loan desk's decisions with review times: about 85 % timed, half of them as the moment
    the case was opened (review_started_at), half as a duration (review_seconds)."""
    rng = random.Random(SEED)
    stampers = _rubber_stampers()
    for row in rows:
        if rng.random() >= TIMED_SHARE:
            continue
        agrees = row["user_decision"] == row["ai_recommendation"]
        seconds = _seconds(rng, quick=row["user_id"] in stampers and agrees and rng.random() < 0.9)
        if rng.random() < 0.5:
            started = _parse(str(row["timestamp"])) - dt.timedelta(seconds=seconds)
            row["review_started_at"] = started.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        else:
            row["review_seconds"] = seconds
    return rows


def probes(*, now: dt.datetime, decisions: int) -> list[ProbeBody]:
    """The older month's probe programme (PROGRAMME known cases per reviewer, PROGRAMME_WRONG of
    them known_wrong, the AI recommending the wrong answer) and, in the recent month, about
    PROBE_SHARE as many probes as its decisions for random reviewers, 70 % known_wrong."""
    rng = random.Random(SEED + 1)
    staff = demo_data.reviewers()
    older = [(r, n < PROGRAMME_WRONG) for r in staff for n in range(PROGRAMME)]
    recent = [(rng.choice(staff), rng.random() < 0.7) for _ in range(round(decisions / 2 * PROBE_SHARE))]
    bodies: list[ProbeBody] = []
    today = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    for (reviewer, wrong), (first_day, last_day) in [  # days before today: inside each month
        *((case, (demo_data.MONTH_DAYS - 1, demo_data.DAYS - 1)) for case in older),
        *((case, (0, demo_data.MONTH_DAYS - 1)) for case in recent),
    ]:
        catch, false_override = PROBE_BEHAVIOUR[reviewer.profile]
        correct = rng.choice(("approve", "deny"))
        other = "deny" if correct == "approve" else "approve"
        ai = other if wrong else correct
        follows = rng.random() >= (catch if wrong else false_override)
        at = today - dt.timedelta(days=rng.uniform(first_day, last_day))
        bodies.append(
            {
                "decision_id": f"demo-probe-{len(bodies) + 1:03d}",
                "user_id": reviewer.user_id,
                "model_id": demo_data.MODEL,
                "model_version": "2.2" if first_day else "2.3",
                "ai_recommendation": ai,
                "ai_confidence": round(rng.uniform(0.7, 0.95), 2),
                "user_decision": ai if follows else (other if ai == correct else correct),
                "context": "known case (vigilance probe)",
                "timestamp": at.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                "review_seconds": _seconds(rng, quick=False),
                "probe": {"kind": "known_wrong" if wrong else "known_right", "correct_decision": correct},
            }
        )
    bodies.sort(key=lambda b: b["timestamp"])
    return bodies


def probes_line(bodies: list[ProbeBody]) -> str:
    """One line for the demo's report on the probes logged with the decisions."""
    wrong = sum(1 for b in bodies if b["probe"]["kind"] == "known_wrong")
    return (
        f"Vigilance probes: {len(bodies)} known cases ({wrong} with a wrong AI recommendation; in the older "
        f"month {PROGRAMME} per reviewer); review times on about {TIMED_SHARE:.0%} of decisions, "
        f"{RUBBER_STAMPERS} reviewers rubber-stamp."
    )
