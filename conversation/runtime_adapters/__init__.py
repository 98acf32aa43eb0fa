"""Adapters of the pure conversation runtime's ports (``conversation/runtime``): Django side.

The turn package runs the runtime with these adapters (``conversation/turns/runtime_step.py``:
``runtime_step`` builds the runtime for the turn's agent, the pipeline sends its reply
through the before-send gates, then commits; when the runtime does not answer,
``with_orchestrator_note`` hands the orchestrator the state summary and directive for that
call only).

Modules: ``store`` (state on ``Conversation.runtime_state``), ``classifiers`` (model
classifiers: forced tool calls), ``offline`` + ``examples`` (the offline classifier),
``backends`` (demo backend, action log, dry run), ``billing_http`` (a real billing system),
``invoices`` (demo invoices), ``demo`` (the seeded demo).
"""
