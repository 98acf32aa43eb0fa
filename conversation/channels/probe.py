"""The "Testar conexão" button: one read-only call to the provider's API that says whether the
channel's settings work, and if not, what is wrong.

- WAHA: ``GET {base_url}/api/sessions/{session}`` with ``X-Api-Key`` — 401 a wrong key,
  404 an unknown session; the session's ``status`` must be ``WORKING`` (``SCAN_QR_CODE``:
  the number still has to be paired; ``STOPPED``/``FAILED``: start it in WAHA).
- Meta: ``GET {graph}/{phone_number_id}?fields=display_phone_number,verified_name`` with the
  Bearer token — 401 (or OAuth error 190) a bad or expired token; error 100 (HTTP 400/404)
  an id that names no number this token can see.

The result carries a stable ``code`` and the provider's own details; the page words it in
pt-BR. Nothing here logs or returns a credential.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx

from conversation.channels.meta import DEFAULT_GRAPH_URL
from conversation.channels.transport import build_client, json_or_empty, provider_timeout

ProbeCode = Literal[
    "ok",
    "invalid_config",
    "unauthorized",
    "forbidden",
    "not_found",
    "not_working",
    "unreachable",
    "timeout",
    "provider_error",
    "unexpected_response",
]

# A probe answers while an admin waits on the page: shorter than a delivery's timeout.
PROBE_TIMEOUT_S = 8.0


@dataclass(frozen=True)
class ProbeResult:
    code: ProbeCode
    http_status: int | None = None
    # What the provider says about the number (session status, display phone, name, ...).
    details: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.code == "ok"


def probe_waha(*, base_url: str, session: str, api_key: str) -> ProbeResult:
    base = base_url.strip().rstrip("/")
    if not base or not session.strip():
        return ProbeResult("invalid_config")
    headers = {"Accept": "application/json"}
    if api_key:
        headers["X-Api-Key"] = api_key
    response = _get(f"{base}/api/sessions/{quote(session.strip(), safe='')}", headers)
    if isinstance(response, ProbeResult):
        return response
    if response.status_code == 404:
        return ProbeResult("not_found", 404)
    failure = _http_failure(response)
    if failure is not None:
        return failure
    data = json_or_empty(response)
    status = str(data.get("status") or "")
    raw_me = data.get("me")
    me: dict[str, Any] = raw_me if isinstance(raw_me, dict) else {}
    details = {
        "status": status,
        "phone": str(me.get("id") or "").split("@")[0],
        "name": str(me.get("pushName") or ""),
    }
    details = {k: v for k, v in details.items() if v}
    if not status:
        return ProbeResult("unexpected_response", response.status_code)
    if status != "WORKING":
        return ProbeResult("not_working", response.status_code, details)
    return ProbeResult("ok", response.status_code, details)


def probe_meta(*, phone_number_id: str, access_token: str, base_url: str = "") -> ProbeResult:
    number = phone_number_id.strip()
    if not number or not access_token:
        return ProbeResult("invalid_config")
    base = (base_url.strip() or DEFAULT_GRAPH_URL).rstrip("/")
    response = _get(
        f"{base}/{quote(number, safe='')}",
        {"Authorization": f"Bearer {access_token}", "Accept": "application/json"},
        params={"fields": "display_phone_number,verified_name,quality_rating"},
    )
    if isinstance(response, ProbeResult):
        return response
    if not response.is_success:
        error = json_or_empty(response).get("error")
        error = error if isinstance(error, dict) else {}
        code = error.get("code")
        details = {"provider_code": str(code)} if code is not None else {}
        if response.status_code == 401 or code == 190:
            return ProbeResult("unauthorized", response.status_code, details)
        if code == 100 or response.status_code == 404:
            return ProbeResult("not_found", response.status_code, details)
        if response.status_code == 403 or code in (10, 200):
            return ProbeResult("forbidden", response.status_code, details)
        return ProbeResult("provider_error", response.status_code, details)
    data = json_or_empty(response)
    details = {
        "phone": str(data.get("display_phone_number") or ""),
        "name": str(data.get("verified_name") or ""),
        "quality": str(data.get("quality_rating") or ""),
    }
    details = {k: v for k, v in details.items() if v}
    if str(data.get("id") or "") != number:
        return ProbeResult("unexpected_response", response.status_code, details)
    return ProbeResult("ok", response.status_code, details)


def _get(
    url: str, headers: dict[str, str], params: dict[str, str] | None = None
) -> httpx.Response | ProbeResult:
    try:
        with provider_timeout(PROBE_TIMEOUT_S), build_client() as client:
            return client.get(url, headers=headers, params=params)
    except httpx.TimeoutException:
        return ProbeResult("timeout")
    except (httpx.UnsupportedProtocol, httpx.InvalidURL):
        return ProbeResult("invalid_config")
    except httpx.TransportError:
        return ProbeResult("unreachable")


def _http_failure(response: httpx.Response) -> ProbeResult | None:
    if response.status_code == 401:
        return ProbeResult("unauthorized", 401)
    if response.status_code == 403:
        return ProbeResult("forbidden", 403)
    if not response.is_success:
        return ProbeResult("provider_error", response.status_code)
    return None
