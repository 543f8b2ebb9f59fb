"""An independent approximation of a risk-adjusted CUSUM's average run length: Brook and Evans'
Markov chain on a discretised [0, h), with the case mix's steps (as in R's `vlad::racusum_arl_mc`).
Its discretisation error is about 1 % at 2,000 states."""

import math

import numpy as np


def markov_arl(case_mix, odds_ratio: float, h: float, true_ratio: float = 1.0, states: int = 2000) -> float:
    """The zero-state ARL of the chart tuned to `odds_ratio` with limit h, when the event's odds
    are `true_ratio` times those of the case mix (1: in control)."""
    p = np.asarray(case_mix, dtype=float)
    q = true_ratio * p / (1 - p + true_ratio * p)
    base = -np.log(1 - p + odds_ratio * p)
    steps = np.concatenate([base + math.log(odds_ratio), base])
    weights = np.concatenate([q, 1 - q]) / p.size
    steps, which = np.unique(steps, return_inverse=True)
    weights = np.bincount(which, weights=weights)
    width = h / states
    value = (np.arange(states) + 0.5) * width
    value[0] = 0.0  # the chart starts, and restarts from its floor, at exactly 0
    transitions = np.zeros((states, states))
    rows = np.arange(states)
    for step, weight in zip(steps, weights, strict=True):
        after = np.maximum(0.0, value + step)
        inside = after < h
        np.add.at(transitions, (rows[inside], np.floor(after[inside] / width).astype(int)), weight)
    return float(np.linalg.solve(np.eye(states) - transitions, np.ones(states))[0])
