"""``conversation.llm.build_client``: the one place that maps a provider name to a class."""

from __future__ import annotations

from conversation.llm import AnthropicClient, OfflineModel, build_client, null_recorder


def test_build_client_offline_is_the_embedded_model() -> None:
    assert isinstance(build_client("offline", null_recorder), OfflineModel)


def test_build_client_anthropic_is_the_api_client() -> None:
    # Choosing offline for a missing key is the caller's policy (conversation.model_calls).
    client = build_client("anthropic", null_recorder, api_key="k", max_retries=0, timeout_s=5)
    assert isinstance(client, AnthropicClient)
