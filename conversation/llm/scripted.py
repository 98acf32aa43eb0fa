"""A model that replays a script: for tests and golden scenarios.

``ScriptedModel`` returns (or raises) its queued items in order and keeps every request it
received, so a test can assert both what the pipeline did with each answer and what it
asked. Running out of script is an ``LlmBadResponse``: a scenario that makes more model
calls than it scripted fails the way a broken provider would, never with an IndexError.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable

from .base import (
    CallRecorder,
    LlmBadResponse,
    LlmError,
    ModelRequest,
    ModelResponse,
    ReportingClient,
    null_recorder,
)


class ScriptedModel(ReportingClient):
    """``ModelClient`` answering from a fixed list of responses and errors."""

    name = "scripted"

    def __init__(
        self,
        responses: Iterable[ModelResponse | LlmError],
        recorder: CallRecorder = null_recorder,
    ) -> None:
        self._queue: deque[ModelResponse | LlmError] = deque(responses)
        self._recorder = recorder
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """How many scripted items have not been used yet."""
        return len(self._queue)

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        self.requests.append(request)
        item: ModelResponse | LlmError = (
            self._queue.popleft()
            if self._queue
            else LlmBadResponse(f"script exhausted after {len(self.requests) - 1} calls")
        )
        if isinstance(item, LlmError):
            self._report(request, started, error_code=item.code)
            raise item
        self._report(request, started, usage=item.usage)
        return item
