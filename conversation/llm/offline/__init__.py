"""The embedded model used when no API key is configured: deterministic and instant.

``OfflineModel`` answers every ``ModelRequest`` from rules, never from the network. The
same request always yields the same response (tool-use ids included).

Orchestrator policy (``purpose == "orchestrator"``), over the tools the request offers:

1. The last message carries ``tool_result`` blocks:
   * a result of ``search_knowledge`` -> ``send_message`` with the first passage
     ("Encontrei isto: ...", at most ~400 characters), or a polite "não encontrei" when the
     result is empty, an error, or says nothing was found (``NO_RESULT_MARKERS``);
   * any other result (``send_message``, ``request_human_handoff``, an error, ...) -> stop
     (``stop_reason="end_turn"``, no tool call).
2. A case-relay directive: a line ``[RELAY] <text>`` (``RELAY_MARKER``) in any system block
   or in the latest user message -> ``send_message`` with that text (several lines are
   joined). It wins over the rules below because a relay turn is triggered by a
   back-office human's answer, not by a new customer message, and the relayed text may
   itself mention "atendente".
3. The latest user text (all lines of a burst; relay lines excluded) asks for a person
   ("atendente", "humano", "falar com alguém", "falar com uma pessoa", "pessoa de
   verdade"; accent and case-insensitive) -> ``request_human_handoff`` with
   ``motivo_codigo="requested_human"`` (the code of ``specs/human-cases.md`` §7 for a
   customer asking for an attendant). A bare "pessoa" ("preço por pessoa") is not a
   request for a person.
4. A greeting only ("oi", "olá", "bom dia", "e aí", ...) -> ``send_message`` with
   "Olá! Sou <agent name>. Como posso ajudar?".
5. Human cases (``specs/human-cases.md``), driven by internal note lines in the latest user
   message (see "Case notes" below):
   * a case waits for the customer (``[CASO_AGUARDANDO_CLIENTE] case_id=<uuid> ...``) and
     ``provide_case_update`` is offered -> ``provide_case_update`` with that case id and the
     customer's text as ``info`` (the customer is answering what the team asked), followed in
     the same response by ``send_message`` with ``CASE_UPDATE_REPLY`` when offered;
   * the customer asks for something only a person can do — a request verb ("quero",
     "preciso", "pode", "cancela", ...) with a refund, chargeback, order cancellation or access
     unlock ("reembolso", "estorno", "cancelar o pedido", "liberar o acesso", ...) — and
     ``open_human_case`` is offered -> ``open_human_case`` with a title for the request, the
     customer's words as the summary and a fixed blocker, followed in the same response by
     ``send_message`` with ``CASE_OPENED_REPLY`` (tools run in order, so the case exists
     before the promise is sent; the tool results then end the turn by rule 1); when a case
     is already open (``[CASO_ABERTO] ...``) -> ``send_message`` saying the team is on it
     (``CASE_ALREADY_OPEN_REPLY``) instead of a second case. A bare question ("qual o prazo
     do reembolso?") is not such a request.
6. Otherwise ``search_knowledge`` with the user's text as the query when offered, else a
   generic helpful ``send_message``.

Case notes: lines starting with ``[INTERNO]``, ``[CASO_ABERTO]`` or
``[CASO_AGUARDANDO_CLIENTE]`` (like ``[RELAY]`` lines) are the system's, never the customer's:
they are removed from the customer's text before rules 3-6 look at it.

Whenever the tool a rule wants is not offered, the answer is plain text with
``stop_reason="end_turn"``: the offline model never calls a tool the request did not offer.

Agent name convention: the first line of the first system block, in the form
``Você é <Nome>[, ...]`` (the name ends at the first comma, period, semicolon, colon, dash
or parenthesis; "Você é a Ana, assistente da Loja" -> "a Ana") or ``Nome: <Nome>``. Without
one, the greeting is "Olá! Como posso ajudar?".

Search result convention (what ``search_knowledge`` returns as tool_result text):
passages separated by blank lines, each optionally starting with a list marker ("1.",
"[1]", "-", "•") that is dropped. An empty result or one containing a ``NO_RESULT_MARKERS``
phrase means nothing was found.

Other purposes (classifiers) with a forced tool choice get a ``tool_use`` of the forced tool
(or the first tool for ``any``) with the minimal input valid for its JSON schema
(``schema_defaults.minimal_input``): the ``"none"`` enum value where present (else the
first), 0 for numbers (confidence 0), empty strings and lists, required properties only.
Real offline classification is done before the model is called, by
``conversation/llm/local_classifier.py``; this is only a safe, schema-valid "no opinion".
Without a forced tool, other purposes get an empty answer.

Every call reports one ``CallRecord`` with model ``"offline"`` and zero tokens.
Modules: ``model`` (``OfflineModel`` and the rules in order), ``reading`` (reading the
request and the pt-BR text rules), ``inputs`` (schema-valid tool inputs), ``replies`` (the
reply texts). Tool names and note markers are the product's wire contract and live in
``conversation/llm/protocol.py``.
"""

from __future__ import annotations

from .model import OfflineModel, tool_use_id
from .reading import agent_name, first_passage, human_only_request, normalize
from .replies import (
    CASE_ALREADY_OPEN_REPLY,
    CASE_BLOCKER,
    CASE_OPENED_REPLY,
    CASE_UPDATE_REPLY,
    GENERIC_REPLY,
    HANDOFF_REASON_CODE,
    HANDOFF_REASON_TEXT,
    NO_RESULT_MARKERS,
    NOT_FOUND_REPLY,
    OFFLINE_MODEL,
)

__all__ = [
    "CASE_ALREADY_OPEN_REPLY",
    "CASE_BLOCKER",
    "CASE_OPENED_REPLY",
    "CASE_UPDATE_REPLY",
    "GENERIC_REPLY",
    "HANDOFF_REASON_CODE",
    "HANDOFF_REASON_TEXT",
    "NOT_FOUND_REPLY",
    "NO_RESULT_MARKERS",
    "OFFLINE_MODEL",
    "OfflineModel",
    "agent_name",
    "first_passage",
    "human_only_request",
    "normalize",
    "tool_use_id",
]
