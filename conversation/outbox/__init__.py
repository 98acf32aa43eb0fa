"""The outbox: every outbound message is stored first, then delivered by a task.

Nothing is lost and nothing goes out twice or out of order (DESIGN §5, issue 10):

- **One ordered chain per conversation** (``chain``): messages go out in ``queued_at``
  order and only the head is attempted; the ones behind it wait without spending
  attempts. A run claims the head with a conditional UPDATE and a lease, calls the provider
  with no transaction open and no lock held, then records the outcome under that claim —
  a redelivered or duplicated task finds nothing to do.
- **Backoff over hours** (``policy``): retryable failures back off exponentially with
  jitter up to ``OUTBOX_RETRY_HORIZON_S``; then the message is ``failed`` with the reason
  ``retry_horizon``. Permanent refusals (invalid number...) fail at once (``rejected``);
  refusals of the channel itself (its credentials, its API URL) count as the provider down.
- **Sent once even when the answer is lost**: a retry whose earlier attempt's echo came
  back (WAHA ``fromMe``) takes the echo's id instead of being sent again; an outcome the
  database could not record at once is recorded when it answers, never re-sent.
- **A circuit breaker per channel** (``breaker``, on the ``ChannelSession`` row): after
  ``OUTBOX_BREAKER_THRESHOLD`` consecutive provider failures nothing is attempted on the
  channel for a cool-down; then one probe; its success resumes every chain of the channel.
- **Resend when the channel answers again**: a message that failed because the provider
  was down stays in its chain's order and is re-sent by itself once the channel works
  (the probe, the breaker's close, or the sweeper); staff can also "Reenviar" any failed
  message (``message_resend``), which puts it at the chain's tail.
- **The sweeper** (``sweep_due``) re-drives chains no task is carrying.
- **Statuses only move forward** (``outbound_status_update``).
"""

from __future__ import annotations

from .delivery import channel_config, deliver_conversation_outbox
from .policy import STATUS_RANK, OutboxPolicy, moves_forward
from .sweep import sweep_due
from .writes import message_resend, outbound_enqueue, outbound_status_update

__all__ = [
    "STATUS_RANK",
    "OutboxPolicy",
    "channel_config",
    "deliver_conversation_outbox",
    "message_resend",
    "moves_forward",
    "outbound_enqueue",
    "outbound_status_update",
    "sweep_due",
]
