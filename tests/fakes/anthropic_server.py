"""A tiny real HTTP server standing in for api.anthropic.com in tests.

The Anthropic SDK is exercised end to end (its HTTP client, headers, retries, timeouts,
error mapping) against a socket on 127.0.0.1; nothing of the SDK is patched. The server
records every request it receives and answers from a queue of canned replies, in order.

    with FakeAnthropicServer() as server:
        server.enqueue_json(200, body)
        client = AnthropicClient("k", base_url=server.base_url, recorder=...)
        ...
        assert server.requests[0].json["model"] == "claude-haiku-4-5"
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One canned answer. ``delay_s`` is slept before anything is written."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str
    headers: Mapping[str, str]  # lower-cased names
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


# Answered when the queue is empty, so a test that under-provisions replies fails loudly
# with an error the SDK will not retry (400) instead of hanging.
_EXHAUSTED = Reply(
    status=400,
    body=b'{"type":"error","error":{"type":"invalid_request_error",'
    b'"message":"fake server: no reply queued"}}',
    headers={"content-type": "application/json"},
)


_FRAMING_HEADERS = frozenset({"content-length", "transfer-encoding", "content-encoding"})


class FakeAnthropicServer:
    def __init__(self) -> None:
        self.requests: list[ReceivedRequest] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # A short poll interval keeps shutdown (one per test) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def enqueue_json(
        self,
        status: int,
        body: Any,
        *,
        headers: Mapping[str, str] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.enqueue(
            Reply(
                status=status,
                body=json.dumps(body).encode(),
                headers={"content-type": "application/json", **(headers or {})},
                delay_s=delay_s,
            )
        )

    def start(self) -> FakeAnthropicServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a delay
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _next_reply(self, received: ReceivedRequest) -> Reply:
        with self._lock:
            self.requests.append(received)
            return self._replies.popleft() if self._replies else _EXHAUSTED

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, like the real API

            def do_POST(self) -> None:
                self._answer()

            def do_GET(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                received = ReceivedRequest(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                reply = fake._next_reply(received)
                if reply.delay_s and fake._stopping.wait(reply.delay_s):
                    return
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        # Framing is ours: a recorded length would not match the body sent.
                        if name.lower() not in _FRAMING_HEADERS:
                            self.send_header(name, value)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (timeout test); nothing to answer.
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                """Keep test output quiet."""

        return Handler
