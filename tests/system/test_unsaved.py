"""config.unsaved.unsaved: the instance Model.__init__ would leave, built without it while no
model has an init signal receiver, and through it (so its receivers run) once one has."""

from django.db.models.signals import post_init

from audit.models import Decision
from config.unsaved import unsaved


def _fields(decision: Decision) -> dict:
    """The fields whose value does not change from one instance to the next (not the key, not a
    default drawn per instance: a time, an id)."""
    return {
        f.attname: getattr(decision, f.attname)
        for f in Decision._meta.concrete_fields
        if f.attname != "id" and not (f.has_default() and callable(f.default))
    }


def test_an_instance_as_init_leaves_it_and_init_receivers_run_once_connected():
    values = {"customer_id": "acme", "decision_id": "d-1", "user_id": "u", "ai_recommendation": "approve"}
    seen: list[Decision] = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance)

    quiet = unsaved(Decision, values)
    assert not seen and quiet._state.adding and quiet.pk is None
    post_init.connect(receiver, sender=Decision, weak=False)
    try:
        heard = unsaved(Decision, values)
    finally:
        post_init.disconnect(receiver, sender=Decision)
    assert seen == [heard]
    assert _fields(quiet) == _fields(heard) == _fields(Decision(**values))
    assert "user_id" in _fields(quiet)


def test_a_name_the_model_has_no_field_for_is_left_out_and_the_fields_keep_their_order():
    values = {"customer_id": "acme", "decision_id": "d-1", "user_id": "u", "not_a_field": 1}
    decision = unsaved(Decision, values)
    assert "not_a_field" not in decision.__dict__
    names = [f.attname for f in Decision._meta.concrete_fields]
    assert [name for name in decision.__dict__ if name in names] == names
    assert decision.user_id == "u" and decision.customer_id == "acme"


def test_defaults_drawn_per_instance_are_drawn_for_each_instance_unless_given():
    first, second = unsaved(Decision, {"user_id": "u"}), unsaved(Decision, {"user_id": "u"})
    assert first.decision_id and second.decision_id and first.decision_id != second.decision_id
    assert unsaved(Decision, {"decision_id": "given"}).decision_id == "given"
