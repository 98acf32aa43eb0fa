"""Template tags other pages use to show routing facts (the agent page's warning)."""

from __future__ import annotations

from django import template

from conversation.models import Agent
from routers import selectors
from routers.models import Router

register = template.Library()


@register.simple_tag
def routers_driving_agent(agent: Agent) -> list[Router]:
    """Active routers in which ``agent`` answers an intent or is the fallback."""
    return selectors.routers_driving_agent(agent)
