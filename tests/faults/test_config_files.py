"""Broken models.json, settings.json and auth.json: a clear message or the defaults, never a crash,
and the file left as it was."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from fault_campaign import Campaign, unchanged
from tau_command import MODEL

from tau.testing.fake_llm import Turn

# Values of every JSON type, and a few that are valid JSON but odd for any field.
WRONG: dict[str, Any] = {
    "null": None,
    "true": True,
    "zero": 0,
    "negative": -1,
    "float": 1.5,
    "huge": 10**30,
    "empty-string": "",
    "string": "nonsense",
    "list": ["x", 1],
    "object": {"nested": {"deeper": [1]}},
}


def set_path(document: Any, path: tuple[str | int, ...], value: Any) -> Any:
    result = copy.deepcopy(document)
    target = result
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return result


def base_models(campaign: Campaign) -> dict[str, Any]:
    """The working models.json, and no retries: a server that cannot be reached fails at once."""
    (campaign.agent_dir / "settings.json").write_text(json.dumps(NO_RETRIES))
    return json.loads((campaign.agent_dir / "models.json").read_text())


NO_RETRIES = {"retry": {"enabled": False, "provider": {"maxRetries": 0}}}


MODEL_FIELDS: list[tuple[str | int, ...]] = [
    ("providers",),
    ("providers", "local"),
    *[
        ("providers", "local", key)
        for key in ("baseUrl", "api", "apiKey", "headers", "compat", "authHeader", "models", "modelOverrides")
    ],
    ("providers", "local", "models", 0),
    *[
        ("providers", "local", "models", 0, key)
        for key in (
            "id",
            "name",
            "api",
            "baseUrl",
            "reasoning",
            "input",
            "contextWindow",
            "maxTokens",
            "cost",
            "compat",
            "headers",
            "thinkingLevelMap",
        )
    ],
]
MODEL_CASES = {
    f"{'.'.join(map(str, path))}={name}": (path, value)
    for path in MODEL_FIELDS
    for name, value in WRONG.items()
}


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_a_models_json_field_of_the_wrong_type(campaign: Campaign, case: str) -> None:
    path, value = MODEL_CASES[case]
    models = campaign.agent_dir / "models.json"
    models.write_text(json.dumps(set_path(base_models(campaign), path, value)))
    campaign.server.add(Turn(text="ok"))
    with unchanged(models):
        campaign.run_check(*MODEL, "-p", "hi")


ODD_MODELS: dict[str, Any] = {
    "api-unknown": ("providers", "local", "api", "telepathy"),
    "base-url-not-a-url": ("providers", "local", "baseUrl", "not a url"),
    "base-url-ftp": ("providers", "local", "baseUrl", "ftp://127.0.0.1/v1"),
    "base-url-bad-ipv6": ("providers", "local", "baseUrl", "http://[::1/v1"),
    "base-url-port-out-of-range": ("providers", "local", "baseUrl", "http://127.0.0.1:99999/v1"),
    "base-url-nothing-listens": ("providers", "local", "baseUrl", "http://127.0.0.1:9/v1"),
    "api-key-command-fails": ("providers", "local", "apiKey", "!exit 3"),
    "api-key-command-prints-nothing": ("providers", "local", "apiKey", "!true"),
    "api-key-command-binary": ("providers", "local", "apiKey", "!printf '\\377\\376'"),
    "api-key-with-newline": ("providers", "local", "apiKey", "key\nX-Injected: 1"),
    "api-key-non-ascii": ("providers", "local", "apiKey", "ключ"),
    "header-value-number": ("providers", "local", "headers", {"X-A": 5}),
    "header-value-newline": ("providers", "local", "headers", {"X-A": "a\r\nX-B: b"}),
    "header-name-empty": ("providers", "local", "headers", {"": "x"}),
    "header-name-with-space": ("providers", "local", "headers", {"bad name": "x"}),
    "header-value-non-ascii": ("providers", "local", "headers", {"X-A": "é☃"}),
    "context-window-zero": ("providers", "local", "models", 0, "contextWindow", 0),
    "context-window-negative": ("providers", "local", "models", 0, "contextWindow", -100),
    "max-tokens-huge": ("providers", "local", "models", 0, "maxTokens", 10**18),
    "max-tokens-float": ("providers", "local", "models", 0, "maxTokens", 12.75),
    "input-unknown-kind": ("providers", "local", "models", 0, "input", ["smell"]),
    "cost-strings": ("providers", "local", "models", 0, "cost", {"input": "cheap", "output": None}),
    "cost-negative": ("providers", "local", "models", 0, "cost", {"input": -1, "output": -1}),
    "compat-values-wrong": ("providers", "local", "compat", {"supportsStore": "no", "maxTokensField": 5}),
    "thinking-map-wrong": ("providers", "local", "models", 0, "thinkingLevelMap", {"high": 5, "bogus": "x"}),
    "model-id-empty": ("providers", "local", "models", 0, "id", ""),
    "model-id-with-slash": ("providers", "local", "models", 0, "id", "a/b/c"),
    "override-unknown-model": ("providers", "local", "modelOverrides", {"nope": {"name": 5}}),
    "overrides-wrong-types": (
        "providers",
        "anthropic",
        {"modelOverrides": {"claude-sonnet-4-5": {"contextWindow": "x"}}},
    ),
}


@pytest.mark.parametrize("case", sorted(ODD_MODELS))
def test_a_models_json_value_that_makes_no_sense(campaign: Campaign, case: str) -> None:
    *path, value = ODD_MODELS[case]
    models = campaign.agent_dir / "models.json"
    models.write_text(json.dumps(set_path(base_models(campaign), tuple(path), value)))
    campaign.server.add(Turn(text="ok"))
    with unchanged(models):
        campaign.run_check(*MODEL, "-p", "hi")


MODELS_TEXTS: dict[str, bytes] = {
    "empty": b"",
    "whitespace": b"  \n\t ",
    "truncated": b'{"providers": {"local": {"baseUrl": "http://',
    "comments": b'// models\n{"providers": {}}',
    "trailing-comma": b'{"providers": {},}',
    "duplicate-keys": b'{"providers": {}, "providers": 5}',
    "nan": b'{"providers": {"local": {"models": [{"id": "m", "contextWindow": NaN}]}}}',
    "invalid-utf8": b'{"providers": {"\xff\xfe": {}}}',
    "utf8-bom": b'\xef\xbb\xbf{"providers": {}}',
    "utf16": '{"providers": {}}'.encode("utf-16"),
    "nul-bytes": b"\x00" * 64,
    "binary": bytes(range(256)),
    "top-level-array": b"[]",
    "top-level-string": b'"providers"',
    "huge-10mb-string": b'{"providers": {}, "x": "' + b"a" * 10_000_000 + b'"}',
    "many-providers": json.dumps(
        {"providers": {f"p{i}": {"baseUrl": "http://x"} for i in range(3000)}}
    ).encode(),
}


@pytest.mark.parametrize("case", sorted(MODELS_TEXTS))
def test_a_models_json_that_is_not_json(campaign: Campaign, case: str) -> None:
    models = campaign.agent_dir / "models.json"
    models.write_bytes(MODELS_TEXTS[case])
    with unchanged(models):
        campaign.run_check(*MODEL, "-p", "hi")


SETTINGS_KEYS: list[tuple[str, ...]] = [
    (key,)
    for key in (
        "defaultProvider",
        "defaultModel",
        "defaultThinkingLevel",
        "steeringMode",
        "followUpMode",
        "transport",
        "toolExecution",
        "shellPath",
        "shellCommandPrefix",
        "sessionDir",
        "extensions",
        "skills",
        "prompts",
        "themes",
        "packages",
        "enabledModels",
        "thinkingBudgets",
        "theme",
        "hideThinkingBlock",
        "quietStartup",
        "doubleEscapeAction",
        "treeFilterMode",
        "enableSkillCommands",
        "npmCommand",
        "compaction",
        "retry",
        "branchSummary",
        "images",
        "terminal",
        "markdown",
    )
] + [
    ("compaction", "enabled"),
    ("compaction", "reserveTokens"),
    ("compaction", "keepRecentTokens"),
    ("retry", "enabled"),
    ("retry", "maxRetries"),
    ("retry", "baseDelayMs"),
    ("retry", "provider"),
    ("branchSummary", "reserveTokens"),
    ("images", "blockImages"),
    ("terminal", "imageWidthCells"),
]
SETTINGS_WRONG = {k: WRONG[k] for k in ("negative", "string", "list", "object")}
SETTINGS_CASES = {
    f"{'.'.join(path)}={name}": (path, value)
    for path in SETTINGS_KEYS
    for name, value in SETTINGS_WRONG.items()
}


def nested(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    document: Any = value
    for key in reversed(path):
        document = {key: document}
    return dict(document)


@pytest.mark.parametrize("case", sorted(SETTINGS_CASES))
def test_a_settings_json_value_of_the_wrong_type(campaign: Campaign, case: str) -> None:
    path, value = SETTINGS_CASES[case]
    settings = campaign.agent_dir / "settings.json"
    settings.write_text(json.dumps(nested(path, value)))
    campaign.server.add(Turn(text="ok"))
    with unchanged(settings):
        campaign.run_check(*MODEL, "-p", "hi")


RETRY_PROVIDER_CASES = {
    f"retry.provider.{key}={name}": (key, value)
    for key in ("timeoutMs", "maxRetries", "maxRetryDelayMs", "idleTimeoutMs")
    for name, value in SETTINGS_WRONG.items()
}


@pytest.mark.parametrize("case", sorted(RETRY_PROVIDER_CASES))
def test_a_provider_retry_setting_of_the_wrong_type(campaign: Campaign, case: str) -> None:
    key, value = RETRY_PROVIDER_CASES[case]
    settings = campaign.agent_dir / "settings.json"
    settings.write_text(json.dumps({"retry": {"enabled": False, "provider": {"maxRetries": 0, key: value}}}))
    campaign.server.add(Turn(text="ok"))
    with unchanged(settings):
        campaign.run_check(*MODEL, "-p", "hi")


@pytest.mark.parametrize("case", sorted(MODELS_TEXTS))
def test_a_settings_json_that_is_not_json(campaign: Campaign, case: str) -> None:
    settings = campaign.agent_dir / "settings.json"
    settings.write_bytes(MODELS_TEXTS[case])
    campaign.server.add(Turn(text="ok"))
    with unchanged(settings):
        campaign.run_check(*MODEL, "-p", "hi")


def test_a_broken_project_settings_file_is_reported_and_kept(campaign: Campaign) -> None:
    project = campaign.work / ".tau" / "settings.json"
    project.parent.mkdir()
    project.write_bytes(b'{"retry": [1, 2')
    campaign.server.add(Turn(text="ok"))
    with unchanged(project):
        outcome = campaign.run_check(*MODEL, "-a", "-p", "hi")  # project settings load only when trusted
    assert "settings.json" in outcome.stderr


AUTH_FILES: dict[str, bytes] = {
    "empty": b"",
    "not-json": b"{'local': 'key'}",
    "top-level-list": b'[{"type": "api_key"}]',
    "provider-string": b'{"local": "sk-123"}',
    "provider-null": b'{"local": null}',
    "type-missing": b'{"local": {"key": "sk"}}',
    "type-unknown": b'{"local": {"type": "magic", "key": "sk"}}',
    "key-number": b'{"local": {"type": "api_key", "key": 5}}',
    "key-empty": b'{"local": {"type": "api_key", "key": ""}}',
    "key-command-fails": b'{"local": {"type": "api_key", "key": "!exit 1"}}',
    "key-with-newline": b'{"local": {"type": "api_key", "key": "a\\nb"}}',
    "oauth-fields-wrong": b'{"local": {"type": "oauth", "access": 5, "refresh": null, "expires": "soon"}}',
    "oauth-expired": b'{"local": {"type": "oauth", "access": "a", "refresh": "r", "expires": 0}}',
    "invalid-utf8": b'{"local": {"type": "api_key", "key": "\xff"}}',
    "binary": bytes(range(256)),
    "anthropic-wrong": b'{"anthropic": {"type": "api_key", "key": ["x"]}}',
}


@pytest.mark.parametrize("case", sorted(AUTH_FILES))
def test_a_broken_auth_json(campaign: Campaign, case: str) -> None:
    auth = campaign.agent_dir / "auth.json"
    auth.write_bytes(AUTH_FILES[case])
    auth.chmod(0o600)
    (campaign.agent_dir / "settings.json").write_text(json.dumps(NO_RETRIES))
    campaign.server.add(Turn(text="ok"))
    with unchanged(auth):
        campaign.run_check(*MODEL, "-p", "hi")
