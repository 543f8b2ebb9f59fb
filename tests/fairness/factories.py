"""Rows for the triage tests that do not depend on decisions being logged."""

import factory
from django.utils import timezone

from fairness.models import AmplificationAlert, FairnessSignal
from keys.models import Customer


class SignalFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = FairnessSignal

    customer = factory.LazyFunction(lambda: Customer.objects.get_or_create(id="acme")[0])
    external_tool_id = "fairlearn"
    model_id = "credit-v3"
    metric_name = "demographic_parity"
    metric_value = 0.2
    protected_attribute = "gender"
    raw_payload_json = "{}"
    signal_timestamp = factory.LazyFunction(timezone.now)
    analysis = factory.LazyFunction(dict)


class AlertFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = AmplificationAlert

    signal = factory.SubFactory(SignalFactory)
    customer = factory.SelfAttribute("signal.customer")
    model_id = factory.SelfAttribute("signal.model_id")
    protected_attribute = factory.SelfAttribute("signal.protected_attribute")
    amplification_score = 0.3
    risk_level = factory.SelfAttribute("severity")
    severity = "medium"
    analysis = factory.LazyFunction(lambda: {"status": "completed", "amplificationScore": 0.3})
