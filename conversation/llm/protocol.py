"""The product's wire contract with every model: tool names and internal note markers.

The orchestrator's tools (``conversation/turns``, ``cases/tools.py``) and the note lines the
system writes into a turn (``cases``) use these names; real models read them in the prompt
and the offline model (``conversation/llm/offline``) acts on them. Production code imports
them from here, never from the offline model.
"""

from __future__ import annotations

# The orchestrator's request purpose (the one purpose with tools the model may choose).
ORCHESTRATOR_PURPOSE = "orchestrator"

# Tool names.
SEND_MESSAGE = "send_message"
REQUEST_HUMAN_HANDOFF = "request_human_handoff"
SEARCH_KNOWLEDGE = "search_knowledge"
OPEN_HUMAN_CASE = "open_human_case"
PROVIDE_CASE_UPDATE = "provide_case_update"

# A line "[RELAY] <text>" asks the model to send <text> to the customer verbatim.
RELAY_MARKER = "[RELAY]"
# Internal note lines of human cases (written by ``cases``; read by every model).
INTERNAL_MARKER = "[INTERNO]"
CASE_OPEN_MARKER = "[CASO_ABERTO]"
CASE_AWAITING_LEAD_MARKER = "[CASO_AGUARDANDO_CLIENTE]"
# Lines starting with any of these are the system's, never the customer's.
NOTE_MARKERS = (RELAY_MARKER, INTERNAL_MARKER, CASE_OPEN_MARKER, CASE_AWAITING_LEAD_MARKER)
