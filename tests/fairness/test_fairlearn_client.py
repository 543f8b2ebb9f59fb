"""A real client: Fairlearn computes the metrics on a generated dataset, and its own output is
ingested as a `fairlearn` signal; the stored signal reads back exactly as sent."""

import numpy as np
import pytest
from fairlearn import __version__ as fairlearn_version
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equalized_odds_difference,
    selection_rate,
    true_positive_rate,
)

from tests.fairness.helpers import SIGNALS, now_iso

pytestmark = pytest.mark.django_db


def dataset(n: int = 2000, seed: int = 7):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["female", "male"], size=n)
    y_true = rng.integers(0, 2, size=n)
    # A model that favours men: a higher chance of a positive prediction.
    p = np.where(sex == "male", 0.65, 0.45)
    y_pred = (rng.random(n) < np.where(y_true == 1, p + 0.2, p - 0.2)).astype(int)
    return y_true, y_pred, sex


def test_fairlearn_metrics_ingested_as_signals_round_trip_exactly(api):
    y_true, y_pred, sex = dataset()
    dpd = float(demographic_parity_difference(y_true, y_pred, sensitive_features=sex))
    eod = float(equalized_odds_difference(y_true, y_pred, sensitive_features=sex))
    frame = MetricFrame(
        metrics={"selection_rate": selection_rate, "true_positive_rate": true_positive_rate},
        y_true=y_true, y_pred=y_pred, sensitive_features=sex,
    )  # fmt: skip
    by_group = {
        metric: {str(k): float(v) for k, v in frame.by_group[metric].items()} for metric in frame.by_group
    }
    assert 0 < dpd < 1 and 0 < eod < 1

    for metric_name, value, fairlearn_fn in (("demographic_parity", dpd, "demographic_parity_difference"),
                                             ("equalized_odds", eod, "equalized_odds_difference")):  # fmt: skip
        raw = {
            "library": "fairlearn",
            "version": fairlearn_version,
            "function": f"fairlearn.metrics.{fairlearn_fn}",
            "value": value,
            "by_group": by_group,
            "difference": {k: float(v) for k, v in frame.difference().items()},
            "ratio": {k: float(v) for k, v in frame.ratio().items()},
            "n_samples": len(y_true),
        }
        body = {
            "externalToolId": "fairlearn",
            "externalToolVersion": fairlearn_version,
            "modelId": "credit-v3",
            "metricName": metric_name,
            "metricValue": value,
            "threshold": 0.1,
            "passesThreshold": value <= 0.1,
            "protectedAttribute": "gender",
            "privilegedGroup": "male",
            "unprivilegedGroup": "female",
            "sampleSize": len(y_true),
            "rawPayload": raw,
            "signalTimestamp": now_iso(minutes=-2),
        }
        created = api.post(SIGNALS, body, format="json")
        assert created.status_code == 201, created.content
        stored = api.get(f"{SIGNALS}/{created.json()['id']}").json()
        assert stored["rawPayload"] == raw
        assert list(stored["rawPayload"]) == list(raw)  # key order as sent
        assert stored["metricValue"] == value  # a float64 survives the trip bit for bit
        assert stored["externalToolId"] == "fairlearn" and stored["metricName"] == metric_name
        assert stored == created.json()
