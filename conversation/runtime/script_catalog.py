"""Canonical (regulated) phrases loaded from ``scripts/*.yaml`` and rendered per channel.

Scripts are validated once at load; reloading means restarting. The catalog's
``version`` is a short sha256 of every script's canonical content, and every rendered
message carries its script id and that version, so an audit can tell which exact
phrase a customer received.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .channel_adapter import PARAMETER_FORMATS, ChannelAdapter, ParameterFormat
from .state import Channel

SCRIPTS_DIR = Path(__file__).resolve().parent / "scripts"
SAME = "same"
_ALLOWED_KEYS = {"id", "trigger", "text", "parameters", "channel"}


class ScriptCatalogError(ValueError):
    """A script file is malformed; the message names the file and the problem."""


@dataclass(frozen=True)
class ScriptParameter:
    name: str
    format: ParameterFormat


@dataclass(frozen=True)
class Script:
    id: str
    trigger: str
    text: str
    parameters: tuple[ScriptParameter, ...]
    # Channel -> alternative text; a channel absent here (or "same") uses ``text``.
    channel: Mapping[Channel, str] = field(default_factory=dict, hash=False)

    def text_for(self, channel: Channel) -> str:
        alternative = self.channel.get(channel, SAME)
        return self.text if alternative == SAME else alternative


@dataclass(frozen=True)
class ScriptRef:
    script_id: str
    catalog_version: str


@dataclass(frozen=True)
class RenderedMessage:
    text: str
    script_id: str | None = None
    catalog_version: str | None = None

    @property
    def ref(self) -> ScriptRef | None:
        if self.script_id is None or self.catalog_version is None:
            return None
        return ScriptRef(self.script_id, self.catalog_version)

    def __str__(self) -> str:
        return self.text


class ScriptCatalog:
    def __init__(
        self,
        scripts_dir: Path = SCRIPTS_DIR,
        *,
        channel_adapter: ChannelAdapter | None = None,
    ) -> None:
        self._adapter = channel_adapter or ChannelAdapter()
        self._by_id: dict[str, Script] = {}
        self._by_trigger: dict[str, Script] = {}
        for path in sorted(Path(scripts_dir).glob("*.yaml")):
            script = _load(path)
            if script.id in self._by_id:
                raise ScriptCatalogError(f"{path.name}: duplicate script id {script.id!r}")
            if script.trigger in self._by_trigger:
                raise ScriptCatalogError(f"{path.name}: duplicate trigger {script.trigger!r}")
            self._by_id[script.id] = script
            self._by_trigger[script.trigger] = script
        self.version = _version(self._by_id.values())

    @property
    def scripts(self) -> tuple[Script, ...]:
        return tuple(self._by_id.values())

    def get(self, script_id: str) -> Script:
        try:
            return self._by_id[script_id]
        except KeyError:
            raise KeyError(f"unknown script id: {script_id!r}") from None

    def select_by_trigger(self, trigger: str) -> Script | None:
        return self._by_trigger.get(trigger)

    def render(
        self,
        script_id: str,
        params: Mapping[str, Any] | None = None,
        channel: Channel = Channel.VOICE,
    ) -> RenderedMessage:
        script = self.get(script_id)
        params = params or {}
        rendered = {}
        for parameter in script.parameters:
            if parameter.name not in params:
                raise KeyError(f"script {script_id!r} needs parameter {parameter.name!r}")
            rendered[parameter.name] = self._adapter.format(
                params[parameter.name], parameter.format, channel
            )
        text = script.text_for(channel).format(**rendered).strip()
        return RenderedMessage(text=text, script_id=script.id, catalog_version=self.version)


def _load(path: Path) -> Script:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ScriptCatalogError(f"{path.name}: malformed YAML ({exc})") from exc
    if not isinstance(data, dict):
        raise ScriptCatalogError(f"{path.name}: expected a mapping at the top level")
    unknown = set(data) - _ALLOWED_KEYS
    if unknown:
        raise ScriptCatalogError(f"{path.name}: unknown keys {sorted(unknown)}")
    for key in ("id", "trigger", "text"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ScriptCatalogError(f"{path.name}: {key!r} must be a non-empty string")
    parameters = _parameters(path, data.get("parameters") or [])
    channel = _channels(path, data.get("channel") or {})
    declared = {p.name for p in parameters}
    for text in [data["text"], *channel.values()]:
        missing = _placeholders(path, text) - declared
        if missing:
            raise ScriptCatalogError(
                f"{path.name}: placeholder(s) {sorted(missing)} missing from 'parameters'"
            )
    return Script(
        id=data["id"].strip(),
        trigger=data["trigger"].strip(),
        text=data["text"].strip(),
        parameters=parameters,
        channel=channel,
    )


def _parameters(path: Path, raw: Any) -> tuple[ScriptParameter, ...]:
    if not isinstance(raw, list):
        raise ScriptCatalogError(f"{path.name}: 'parameters' must be a list")
    out = []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ScriptCatalogError(f"{path.name}: each parameter needs a 'name'")
        fmt = entry.get("format")
        if fmt not in PARAMETER_FORMATS:
            raise ScriptCatalogError(
                f"{path.name}: parameter {entry['name']!r} has unknown format {fmt!r}"
            )
        out.append(ScriptParameter(name=entry["name"], format=fmt))
    return tuple(out)


def _channels(path: Path, raw: Any) -> dict[Channel, str]:
    if not isinstance(raw, dict):
        raise ScriptCatalogError(f"{path.name}: 'channel' must be a mapping")
    out = {}
    for key, text in raw.items():
        try:
            channel = Channel(key)
        except ValueError:
            raise ScriptCatalogError(f"{path.name}: unknown channel {key!r}") from None
        if not isinstance(text, str) or not text.strip():
            raise ScriptCatalogError(f"{path.name}: channel {key!r} needs 'same' or a text")
        out[channel] = text.strip()
    return out


def _placeholders(path: Path, text: str) -> set[str]:
    if text == SAME:
        return set()
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ScriptCatalogError(f"{path.name}: malformed placeholder ({exc})") from exc
    names = set()
    for _literal, field_name, _spec, _conv in parsed:
        if field_name is None:
            continue
        if not field_name.isidentifier():
            raise ScriptCatalogError(f"{path.name}: invalid placeholder {{{field_name}}}")
        names.add(field_name)
    return names


def _version(scripts: Any) -> str:
    canonical = [
        {
            "id": s.id,
            "trigger": s.trigger,
            "text": s.text,
            "parameters": [[p.name, p.format] for p in s.parameters],
            "channel": {
                c.value: t for c, t in sorted(s.channel.items(), key=lambda kv: kv[0].value)
            },
        }
        for s in sorted(scripts, key=lambda s: s.id)
    ]
    blob = json.dumps(canonical, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:12]
