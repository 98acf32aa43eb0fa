from django.db import connection
from django.test.utils import CaptureQueriesContext
from tests import factories
from tests.conversation.test_views_conversations import _turn

def test_q(world):
    c = factories.make_conversation(world.channel_a)
    client = world.client_for(world.viewer)
    client.get(f"/conversas/{c.pk}/")
    with CaptureQueriesContext(connection) as ctx:
        client.get(f"/conversas/{c.pk}/")
    for q in ctx.captured_queries:
        print(q["sql"][:150])
    assert 0
