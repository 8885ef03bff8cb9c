"""The types of the settings tau reads, so that a wrong value is reported instead of silently ignored.

``settings_problems`` checks one loaded file: each known key holding a value of the wrong type (or
a negative count, or a word outside its choices) gives one line naming the key, what it should be
and what it is. The getters of ``SettingsManager`` ignore such a value (using the default); this
module only says so. Keys tau does not know are not checked: they may belong to pi or to a newer tau.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from tau.ai.thinking import THINKING_LEVELS
from tau.compaction.settings import OVERRIDE_KEYS, is_token_count

__all__ = ["parse_timeout_ms", "settings_problems"]

# What a key's value should be: a test and how to describe a value that passes it.
Rule: TypeAlias = tuple[Callable[[Any], bool], str]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_timeout_ms(value: Any) -> int | None:
    """A timeout setting as pi reads it: milliseconds (a number or numeric text), ``"disabled"`` = 0;
    ``None`` for anything else."""
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "disabled":
            return 0
        try:
            value = float(text)
        except ValueError:
            return None
    if not _is_number(value) or not 0 <= value < float("inf"):
        return None
    return int(value)


def _one_of(*choices: str) -> Rule:
    described = ", ".join(f'"{choice}"' for choice in choices)
    return (lambda value: value in choices), f"one of {described}"


_BOOL: Rule = (lambda value: isinstance(value, bool), "true or false")
_COUNT: Rule = (lambda value: _is_number(value) and value >= 0, "a number, 0 or more")
_STRING: Rule = (lambda value: isinstance(value, str), "a string")
_BOOL_OR_AUTO: Rule = (lambda value: isinstance(value, bool) or value == "auto", 'true, false or "auto"')
_TIMEOUT: Rule = (lambda value: parse_timeout_ms(value) is not None, 'milliseconds, 0 or more, or "disabled"')
_STRINGS: Rule = (
    lambda value: isinstance(value, list) and all(isinstance(item, str) for item in value),
    "a list of strings",
)
_PACKAGES: Rule = (
    lambda value: isinstance(value, list) and all(isinstance(item, str | dict) for item in value),
    "a list of package names or objects",
)
_BUDGETS: Rule = (
    lambda value: isinstance(value, dict) and all(_is_number(v) and v >= 0 for v in value.values()),
    "an object of token counts",
)

_LEVELS: Rule = (
    lambda value: isinstance(value, dict) and all(v in THINKING_LEVELS for v in value.values()),
    f"an object of thinking levels ({', '.join(THINKING_LEVELS)})",
)

_VERSIONS: Rule = (
    lambda value: isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
    "an object of version strings",
)

_TOP_LEVEL: dict[str, Rule] = {
    "defaultProvider": _STRING,
    "defaultModel": _STRING,
    "defaultThinkingLevel": _one_of(*THINKING_LEVELS),
    "modelThinkingLevels": _LEVELS,
    "enabledModels": _STRINGS,
    "defaultTools": _STRINGS,
    "thinkingBudgets": _BUDGETS,
    "transport": _one_of("sse", "websocket", "websocket-cached", "auto"),
    "steeringMode": _one_of("all", "one-at-a-time"),
    "followUpMode": _one_of("all", "one-at-a-time"),
    "toolExecution": _one_of("parallel", "sequential"),
    "shellPath": _STRING,
    "shellCommandPrefix": _STRING,
    "npmCommand": _STRINGS,
    "sessionDir": _STRING,
    "packages": _PACKAGES,
    "extensions": _STRINGS,
    "skills": _STRINGS,
    "prompts": _STRINGS,
    "themes": _STRINGS,
    "enableSkillCommands": _BOOL,
    "theme": _STRING,
    "tuiMode": _one_of("regular", "fullscreen"),
    "fullscreenExitOutput": _one_of("transcript", "resume-hint"),
    "fullscreenCopyOnSelect": _BOOL,
    "fullscreenScrollbar": _one_of("auto", "always", "hidden"),
    "fullscreenWheelScrollLines": (
        (lambda value: value == "auto" or _is_number(value)),
        '"auto" or a number of lines',
    ),
    "quietStartup": ((lambda value: isinstance(value, bool) or value == "header"), 'true, false or "header"'),
    "hideThinkingBlock": _BOOL,
    "cacheWarming": _one_of("off", "streaming", "idle"),
    "collapseChangelog": _BOOL,
    "showCacheMissNotices": _BOOL,
    "lastChangelogVersion": _STRING,
    "extensionChangelogVersions": _VERSIONS,
    "enableInstallTelemetry": _BOOL,
    "doubleEscapeAction": _one_of("tree", "fork", "none"),
    "treeFilterMode": _one_of("default", "no-tools", "user-only", "labeled-only", "all"),
    "editorPaddingX": _COUNT,
    "autocompleteMaxVisible": _COUNT,
    "showHardwareCursor": _BOOL,
    "externalEditor": _STRING,
    "sessionShareDestination": _one_of("auto", "gist", "radius"),
    "selfUpdateCommand": _STRINGS,
    "outputPad": ((lambda value: value in (0, 1) and not isinstance(value, bool)), "0 or 1"),
    "httpIdleTimeoutMs": _TIMEOUT,
    "websocketConnectTimeoutMs": _TIMEOUT,
    "httpProxy": _STRING,
}

_SECTIONS: dict[str, dict[str, Rule]] = {
    "compaction": {"enabled": _BOOL, "reserveTokens": _COUNT, "keepRecentTokens": _COUNT},
    "branchSummary": {"reserveTokens": _COUNT, "skipPrompt": _BOOL},
    "retry": {"enabled": _BOOL, "maxRetries": _COUNT, "baseDelayMs": _COUNT, "maxAgentDelayMs": _COUNT},
    "retry.provider": {
        "timeoutMs": _COUNT,
        "maxRetries": _COUNT,
        "maxRetryDelayMs": _COUNT,
        "idleTimeoutMs": _COUNT,
    },
    "images": {"blockImages": _BOOL, "autoResize": _BOOL},
    "codemode": {"mode": _one_of("on", "only"), "inlineBudget": _COUNT},
    "task": {"timeoutSeconds": _COUNT},
    "terminal": {
        "showImages": _BOOL,
        "imageWidthCells": _COUNT,
        "clearOnShrink": _BOOL,
        "showTerminalProgress": _BOOL,
        "hyperlinks": _BOOL_OR_AUTO,
        "trueColor": _BOOL_OR_AUTO,
        "images": (
            lambda value: value in ("kitty", "iterm2", "auto", False),
            '"kitty", "iterm2", "auto" or false',
        ),
    },
    "markdown": {"codeBlockIndent": _STRING, "mermaid": _one_of("off", "final", "streaming")},
    "warnings": {"anthropicExtraUsage": _BOOL},
}


def settings_problems(settings: Mapping[str, Any]) -> list[str]:
    """One line per known key of ``settings`` (one file, after migration) whose value tau cannot use."""
    problems: list[str] = []
    for key, rule in _TOP_LEVEL.items():
        _check(settings, key, key, rule, problems)
    for path, rules in _SECTIONS.items():
        section = _section(settings, path, problems)
        for key, rule in rules.items():
            _check(section, key, f"{path}.{key}", rule, problems)
    _check_model_overrides(_section(settings, "compaction", []), problems)
    return problems


def _check_model_overrides(compaction: Mapping[str, Any], problems: list[str]) -> None:
    """``compaction.modelOverrides``: ``{"provider/modelId": {"reserveTokens": n, ...}}``."""
    name = "compaction.modelOverrides"
    overrides = compaction.get("modelOverrides")
    if overrides is None:
        return
    if not isinstance(overrides, dict):
        problems.append(_problem(name, 'an object keyed by "provider/modelId"', overrides))
        return
    for model, entry in overrides.items():
        if not isinstance(entry, dict):
            problems.append(_problem(f"{name}.{model}", "an object", entry))
            continue
        for key in OVERRIDE_KEYS:
            value = entry.get(key)
            if value is not None and not is_token_count(value):
                problems.append(_problem(f"{name}.{model}.{key}", "a whole number, 0 or more", value))


def _section(settings: Mapping[str, Any], path: str, problems: list[str]) -> Mapping[str, Any]:
    """The object at a dotted ``path`` (empty when absent; reported when it is not an object)."""
    current: Mapping[str, Any] = settings
    walked: list[str] = []
    for part in path.split("."):
        walked.append(part)
        value = current.get(part)
        if value is None:
            return {}
        if not isinstance(value, dict):
            if len(walked) == len(path.split(".")):  # a parent's problem was reported with the parent
                problems.append(_problem(".".join(walked), "an object", value))
            return {}
        current = value
    return current


def _check(section: Mapping[str, Any], key: str, name: str, rule: Rule, problems: list[str]) -> None:
    value = section.get(key)
    test, expected = rule
    if value is not None and not test(value):
        problems.append(_problem(name, expected, value))


def _problem(name: str, expected: str, value: Any) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f'"{name}" should be {expected}, not {shown} (ignored)'
