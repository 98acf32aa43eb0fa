from tests.conftest import simulator_post


def test_simulator_message_gets_an_ai_reply(world, django_capture_on_commit_callbacks):
    from django.test import Client

    from conversation.models import Message

    with django_capture_on_commit_callbacks(execute=True):
        response = simulator_post(Client(), world.channel_a, "oi", msg_id="m1")
    assert response.status_code == 200
    bodies = list(Message.objects.order_by("created_at").values_list("sender_kind", "body"))
    assert bodies[0] == ("customer", "oi")
    assert bodies[1][0] == "ai" and "Suporte" in bodies[1][1]
