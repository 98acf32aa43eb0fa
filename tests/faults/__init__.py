"""Fault drills: nothing lost, nothing answered twice, nothing out of order (issue 10 item 8).

``test_faults.py`` runs five drills on the real stack, each bounded in time:

* PostgreSQL (``DATABASE_URL`` naming the runner's own database; the workers run as
  ``DATABASE_APP_ROLE``, walls up),
* a **private** ``redis-server`` started by the harness on a free port (``BrokerProcess``),
  so a drill may stop it and start it again empty without touching anybody's Redis,
* real Celery workers and beat started with ``scripts/worker.sh`` (``stack.Processes``:
  threads pool, psycopg pool, the documented command lines), recovery settings short
  through their environment (``stack.FAST_RECOVERY``: a 1 s sweep, a 5 s lease),
* signed WAHA webhooks (HMAC-SHA512 of the raw body) posted through the Django test client,
* a fake WAHA provider (``harness.FakeProvider``: records every ``sendText``; per channel
  ``down`` or ``hang``) and a fake Anthropic API (``stack.FakeModel``: the recorded
  ``tool_use`` wire format, per agent ``broken`` or ``hang``).

The drills: the broker down while webhooks are accepted (200, answered by the sweeper once
it is back); a worker ``kill -9``-ed with three turns mid model call (taken over by another
worker after the lease, each answered once); the provider down through three queued replies
per conversation for longer than the old retry budget (delivered once, in order); the model
answering broken JSON (notice + ``llm_unavailable`` handoff) or timing out for an agent that
retries (notice, then the real answer once the model is back); a slow model keeping each turn
busier than its lease (kept by its live worker, decided once, never taken over).

What is counted (``harness.Tally``, from the database and the provider's record; the same
figures ``bench/faults.py`` prints per scenario, at 200 conversations, with recovery
times): ``messages``, ``answered_once``, ``lost``, ``duplicated``, ``out_of_order``,
``max_first_reply_s``, ``webhook_5xx``.

Markers: ``worker`` and ``postgres`` with ``django_db(transaction=True)``. On SQLite they
are skipped, like the other worker tests (worker processes need a shared server database).
"""
