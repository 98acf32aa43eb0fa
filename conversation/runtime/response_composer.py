"""Dynamic phrases built from the queue and items, and a proxy to the script catalog.

Regulated, word-for-word phrases come from ``ScriptCatalog``; sentences that depend on
the queue (confirmation, transitions, outcomes) and the orchestrator directives are
composed here. Both go through the channel adapter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .channel_adapter import ChannelAdapter, format_brl, to_decimal
from .intent_extractor import asks_double_refund
from .invoice_resolver import ItemResolution
from .line_choice import describe_lines
from .script_catalog import RenderedMessage, ScriptCatalog
from .state import (
    ActionQueue,
    Channel,
    FinalizationStatus,
    PendingConfirmation,
    ToolCategory,
    ToolOutcome,
)
from .textnorm import join_pt, last_digits, slug

# Action-verb slugs (from the classifier) whose regulated script is said before the
# confirmation. Checked in this order; each script is said at most once.
PREAMBLE_TRIGGERS_BY_VERB: dict[str, str] = {
    "ressarcimento_em_dobro": "ressarcimento_em_dobro",
    "ressarcir_em_dobro": "ressarcimento_em_dobro",
    "devolucao_em_dobro": "ressarcimento_em_dobro",
    "devolver_em_dobro": "ressarcimento_em_dobro",
    "devolucao": "devolucao",
    "devolver": "devolucao",
    "reembolso": "devolucao",
    "estorno": "devolucao",
}
CLOSING_SCRIPTS: dict[FinalizationStatus, str] = {
    "resolvido": "encerramento_resolvido",
    "nao_resolvido": "encerramento_nao_resolvido",
    "outros_assuntos": "encerramento_nao_resolvido",
}
_CATEGORY_ORDER: tuple[ToolCategory, ...] = ("cancelar_vas_avulso", "pro_rata", "vas_estrategico")


class ResponseComposer:
    def __init__(
        self,
        catalog: ScriptCatalog,
        channel_adapter: ChannelAdapter | None = None,
        *,
        channel: Channel = Channel.VOICE,
    ) -> None:
        self._catalog = catalog
        self._adapter = channel_adapter or ChannelAdapter()
        self.channel = channel

    # --- confirmation -----------------------------------------------------------------

    def confirmation(self, action_queue: ActionQueue) -> str:
        """One sentence for the whole queue: single- or multi-intent template.

        The verb is fixed per block and never crosses: avulso "cancelar" (item by item,
        with amount and line), strategic "falar sobre" (no amount, grouped by line).
        """
        by_category: dict[ToolCategory, list[Mapping[str, Any]]] = {}
        for step in action_queue.steps[action_queue.cursor :]:
            if step.tool not in _CATEGORY_ORDER:
                raise ValueError(f"Unsupported action tool: {step.tool}")
            by_category.setdefault(step.tool, []).extend(step.items)
        categories = [c for c in _CATEGORY_ORDER if by_category.get(c)]
        if not categories:
            return ""
        if len(categories) == 1:
            return self._single_intent(categories[0], by_category[categories[0]])
        fragments = [self._fragment(c, by_category[c]) for c in categories]
        following = ", ".join(f"e também {f}" for f in fragments[1:])
        return f"Entendi que você deseja {fragments[0]}, {following}. Correto?"

    def _single_intent(self, category: ToolCategory, items: Sequence[Mapping[str, Any]]) -> str:
        if category == "cancelar_vas_avulso":
            article = "do serviço" if len(items) == 1 else "dos serviços"
            return (
                f"Vamos seguir com o cancelamento {article} {self._avulso_body(items)} "
                "e providenciar a retirada dos valores da fatura. Você confirma?"
            )
        return f"Entendi que você deseja {self._fragment(category, items)}. Correto?"

    def _fragment(self, category: ToolCategory, items: Sequence[Mapping[str, Any]]) -> str:
        article = "o serviço" if len(items) == 1 else "os serviços"
        if category == "cancelar_vas_avulso":
            return f"cancelar {article} {self._avulso_body(items)}"
        if category == "vas_estrategico":
            return f"falar sobre {article} {self._strategic_body(items)}"
        # pro rata is out of scope: a minimal static fragment keeps legacy queues working.
        return f"revisar a cobrança proporcional de {join_pt([_name(i) for i in items])}"

    def _avulso_body(self, items: Sequence[Mapping[str, Any]]) -> str:
        parts = []
        for item in items:
            final = self._adapter.line_final(str(item.get("msisdn", "")), self.channel)
            value = item.get("value")
            amount = f", no valor de {format_brl(to_decimal(value))}" if value is not None else ""
            parts.append(f"{_name(item)}{amount}, vinculado ao número final {final}")
        return ", ".join(parts)

    def _strategic_body(self, items: Sequence[Mapping[str, Any]]) -> str:
        groups: dict[str, list[str]] = {}
        for item in items:
            groups.setdefault(str(item.get("msisdn", "")), []).append(_name(item))
        body = ""
        for index, (msisdn, names) in enumerate(groups.items()):
            linked = "vinculado" if len(names) == 1 else "vinculados"
            final = self._adapter.line_final(msisdn, self.channel)
            text = f"{join_pt(names)} {linked} ao número final {final}"
            if index == 0:
                body = text
            else:
                article = "do" if len(names) == 1 else "dos serviços"
                body += f", e também {article} {text}"
        return body

    # --- transitions and outcomes ------------------------------------------------------

    def next_action_transition(self, next_subject: str) -> str:
        return f"Agora, vamos falar sobre {next_subject}."

    def action_outcome(self, subject: str, outcome: ToolOutcome) -> str:
        """Said when the backend returns no message of its own."""
        if outcome is ToolOutcome.SUCCESS:
            return f"Pronto! A solicitação sobre {subject} foi concluída."
        if outcome is ToolOutcome.NO_MATCH:
            return f"Não encontrei {subject} ativo para essa solicitação."
        if outcome is ToolOutcome.PARTIAL:
            return f"Concluí apenas parte da solicitação sobre {subject}."
        return f"Não consegui concluir a solicitação sobre {subject} agora."

    def which_line(
        self, ambiguous: Sequence[ItemResolution], invoice_detail: Mapping[str, Any]
    ) -> str:
        """Ask which item (or line) an ambiguous mention means, as the customer sees them."""
        questions = []
        for resolution in ambiguous:
            matches = resolution.matches
            names = list(dict.fromkeys(m.canonical_name for m in matches))
            if len(names) == 1:
                lines = len({m.msisdn for m in matches})
                every = "das duas" if lines == 2 else "de todas"
                questions.append(
                    f"O serviço {names[0]} aparece em mais de uma linha da sua fatura: "
                    f"{describe_lines(matches, invoice_detail)}. De qual linha você está "
                    f"falando? Pode responder com o final do número ou dizer “{every}”."
                )
            else:
                options = join_pt(
                    [f"{m.canonical_name} (linha final {last_digits(m.msisdn)})" for m in matches]
                )
                questions.append(
                    f"Encontrei mais de um serviço para “{resolution.mention}”: {options}. "
                    "Qual deles?"
                )
        return "\n\n".join(questions)

    def ask_again(self, prompt: str, why: str) -> str:
        """The same question again, saying why it is asked again (DESIGN §10.1)."""
        if why == "goodbye":
            return f"Antes de encerrar: ainda não concluí a sua solicitação. {prompt}"
        if why == "line":
            return f"Só para ter certeza: {prompt}"
        if why == "unclear":
            return (
                f"Só para ter certeza: {prompt} Responda *sim* para confirmar ou *não* para "
                "deixar como está."
            )
        # Asked again after a turn in between: the question itself, word for word.
        return prompt

    def request_dropped(self, subjects: Sequence[str]) -> str:
        """Said when the conversation closes with a request never confirmed, or with a
        workflow still waiting for the customer's answer."""
        return f"Não segui com a solicitação sobre {join_pt(list(subjects))}."

    def paused_work_first(self, subjects: Sequence[str], paused_subject: str) -> str:
        """Said when a request is confirmed while a workflow waits for the customer's answer:
        the new request follows the answer (``ConversationRuntime._run_confirmed``)."""
        if not subjects:
            return ""  # nothing new to run: the waiting question alone
        return (
            f"Combinado, sigo com {join_pt(list(subjects))} em seguida. Antes, preciso da sua "
            f"resposta sobre {paused_subject}:"
        )

    def nothing_left(self, paused_subject: str = "") -> str:
        """Said when the customer withdraws every item of the pending request; with a
        workflow still waiting for them, its question follows instead of "anything else"."""
        if paused_subject:
            return (
                "Certo, então não vou seguir com nenhum desses. Ainda preciso da sua resposta "
                f"sobre {paused_subject}:"
            )
        return "Certo, então não vou seguir com nenhum desses. Posso ajudar com mais alguma coisa?"

    def withdrawn(self, subjects: Sequence[str], paused_subject: str = "") -> str:
        """Said when the customer calls off what waited for them ("esquece", "deixa pra
        lá"); with a workflow still waiting behind it, its question follows."""
        names = join_pt(list(subjects))
        head = (
            f"Certo, não vou seguir com a solicitação sobre {names}."
            if names
            else "Certo, não vou seguir com essa solicitação."
        )
        if paused_subject:
            return f"{head} Ainda preciso da sua resposta sobre {paused_subject}:"
        return f"{head} {self.anything_else()}"

    def call_off_unclear(self, subject: str, question: str) -> str:
        """A bare "cancela isso" while a workflow waits: its answer or calling it off? The
        question again, and how to call it off."""
        return (
            f"Só para ter certeza sobre {subject}: {question} Se preferir não seguir com "
            "essa solicitação, é só dizer *esquece*."
        )

    def retry_question(self, subject: str) -> str:
        return f"Quer que eu tente de novo a solicitação sobre {subject}?"

    def anything_else(self) -> str:
        return "Posso ajudar com mais alguma coisa?"

    def informative_followup(self) -> str:
        return "Consegui esclarecer sua dúvida?"

    # --- catalog-backed -----------------------------------------------------------------

    def item_not_found(self, mentioned_items: Sequence[str]) -> RenderedMessage:
        names = [m.strip() for m in mentioned_items if m.strip()]
        if not names:
            services = "esse serviço"
        elif len(names) == 1:
            services = f"o serviço {names[0]}"
        else:
            services = f"os serviços {join_pt(names)}"
        return self.from_catalog("item_not_found", {"servicos": services})

    def from_catalog(
        self,
        script_id: str,
        params: Mapping[str, Any] | None = None,
    ) -> RenderedMessage:
        return self._catalog.render(script_id, params, channel=self.channel)

    def closing(self, status: FinalizationStatus) -> RenderedMessage:
        return self.from_catalog(CLOSING_SCRIPTS[status])

    def regulated_preamble(
        self, action_verbs: Sequence[str], text: str = ""
    ) -> tuple[RenderedMessage, ...]:
        """Regulated scripts owed before confirming, from the customer's action verbs and,
        for the double-refund refusal, from how they worded it (issue 11: "me devolver em
        dobro", "reembolso em dobro" are the same demand)."""
        triggers = {PREAMBLE_TRIGGERS_BY_VERB.get(slug(verb)) for verb in action_verbs}
        if any("dobro" in slug(verb) for verb in action_verbs) or asks_double_refund(text):
            triggers.add("ressarcimento_em_dobro")
        out = []
        for trigger in dict.fromkeys(PREAMBLE_TRIGGERS_BY_VERB.values()):
            script = self._catalog.select_by_trigger(trigger) if trigger in triggers else None
            if script is not None:
                out.append(self.from_catalog(script.id))
        return tuple(out)

    # --- orchestrator directives (appended to the customer's message, never the prompt) ---

    def disambiguation_directive(self, ambiguous: Sequence[ItemResolution]) -> str:
        lines = [
            "O cliente pediu uma ação sobre um serviço que corresponde a mais de um item da "
            "fatura. Antes de qualquer ação, pergunte a qual deles ele se refere."
        ]
        for resolution in ambiguous:
            candidates = "; ".join(
                f"{m.canonical_name} (linha final {last_digits(m.msisdn)})"
                for m in resolution.matches
            )
            lines.append(f'Menção "{resolution.mention}": {candidates}.')
        return "\n".join(lines)

    def negation_with_pending_directive(self, pending: PendingConfirmation) -> str:
        queue = pending.authorized_queue
        items = [
            f"{_name(i)} (linha final {last_digits(str(i.get('msisdn', '')))})"
            for step in queue.steps[queue.cursor :]
            for i in step.items
        ]
        return "\n".join(
            [
                "O cliente respondeu negativamente à confirmação pendente sobre: "
                f"{join_pt(items) or 'itens da fatura'}.",
                "Caminho A (ação): só se o cliente pedir explicitamente uma ação, como cancelar; "
                "nesse caso confirme antes de executar.",
                "Caminho B (padrão, informativo): explique as origens possíveis da cobrança "
                "(teste gratuito que virou assinatura, contratação por engano em canal digital, "
                "aceite incidental de uma oferta) e termine com uma pergunta aberta. "
                "Não ofereça o cancelamento por iniciativa própria.",
            ]
        )


def _name(item: Mapping[str, Any]) -> str:
    return str(item.get("canonical_name") or item.get("service") or item.get("name") or "")
