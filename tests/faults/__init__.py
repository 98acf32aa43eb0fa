"""Fault tests: nothing lost, nothing answered twice, nothing out of order (issue 10 item 8).

Status: PLAN + harness (``tests/faults/harness.py``). The scenarios below become tests in the
next phase, once the turn package has the sweeper, the lease-based claim and the ordered
outbox chain; run today, most of them report losses, which is what they are for.

Every scenario runs the real stack, bounded in time:

* PostgreSQL (``DATABASE_URL`` naming the runner's own database, as the app role in CI),
* a **private** ``redis-server`` started by the harness on a free port (``BrokerProcess``),
  so a scenario may stop it, restart it empty or flush it without touching anybody's Redis,
* real Celery worker processes (``tests/celery_workers.celery_workers``) on that broker, and
  Celery beat once the sweeper exists (short schedule through settings env, e.g. a 1 s sweep),
* signed WAHA webhooks (HMAC-SHA512 of the raw body, the channel's secret, the channel's
  ``session``) posted through the Django test client in the runner's process, and
* a fake WAHA provider (``FakeProvider``: a threaded HTTP server answering ``/api/sendText``)
  that records every send it receives (channel tag, chat, text, time) and can be switched,
  per channel, to ``down`` (connection refused / 503) or ``hang`` (holds the request).

What is counted (``harness.Tally``, from the database and the provider's record; the same
figures ``bench/faults.py`` prints per scenario):

* ``messages``: customer lines posted; ``answered_once``: lines whose answering turn's reply
  reached the provider exactly once; ``lost``: lines with no reply at the provider by the
  deadline (not stored, never turned, or the reply never delivered);
* ``duplicated``: sends beyond one per outbound row, replying turns that answered no line,
  and customer lines stored twice;
* ``out_of_order``: per conversation, adjacent provider receipts whose outbound rows were
  written in the other order;
* ``max_first_reply_s``: per burst, from its first line to the first reply at the provider
  (the backlog target is measured from the burst's last line: ≤ window + 2 s).

The five scenarios (each a ``harness.Scenario``; tests use ~10-20 conversations, the bench
200):

1. ``broker_down`` — stop the private Redis, post N first messages (each webhook must answer
   200: the row is stored, the publish failure is logged), start Redis again (empty: the
   "lost its queue" case is the same run). Expect every line answered once within the sweep
   interval + the burst window + a margin after the broker is back.
2. ``worker_killed`` — two workers; post bursts of 3 lines to N conversations with a real
   burst window (e.g. 2 s); ``SIGKILL`` worker 0's main process while it holds turns (poll
   ``Turn.status == running`` or just after the first replies); keep worker 1 (and start a
   replacement). Expect every line answered once, none twice (the lease expires, the
   sweeper re-drives; the unique trigger and the claim check stop a second reply), and no
   outbox row left ``queued``.
3. ``provider_down`` — the provider refuses sends for longer than the old retry budget
   (e.g. 45 s for ~30 s of old retries; configurable shorter backoff in the test) while 3
   replies per conversation are pending. Expect, after it recovers, every reply delivered
   once and in order per conversation (one ordered chain per conversation; resend after the
   circuit closes).
4. ``tenant_hang`` — two organizations on two channels; org A's provider path hangs; measure
   org B's first-reply latency against its quiet baseline measured first in the same run.
   Expect B within 2x its baseline (separate queues, short provider timeouts, no lock held
   across the HTTP call).
5. ``first_message_race`` — a known contact, a new channel: two identical first messages
   released by a barrier from two threads (and two different ones). Expect one stored (two
   for different ids) in one conversation, no 5xx. (The PostgreSQL test already exists:
   ``tests/channels/test_webhook_race.py``; here it runs against the real workers too.)

The bench adds ``backlog``: 1,000 lines in bursts over 200 conversations posted faster than
the workers drain them; expect first replies ≤ window + 2 s after each burst's last line and
never later than the configured maximum after its first line.

Markers: ``@pytest.mark.worker`` and ``@pytest.mark.postgres`` with
``pytest.mark.django_db(transaction=True)`` (like ``tests/conversation/test_worker.py``);
each scenario has a hard deadline (``Scenario.deadline_s``) so a regression fails, never
hangs the suite.
"""
