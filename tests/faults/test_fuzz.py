"""Generated bad input (hypothesis): session lines, models.json, settings.json. Whatever the bytes,
tau exits 0 or 1 without a traceback and leaves the file as it was. Derandomised, so every run
checks the same examples; most run in process, a few in the real ``tau`` process."""

from __future__ import annotations

import json
from typing import Any

from fault_campaign import Campaign, count_lost
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tau_command import MODEL

from tau.testing.fake_llm import Turn

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FEW = settings(FUZZ, max_examples=5)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)

ENTRY_TYPES = [
    "message",
    "thinking_level_change",
    "model_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "session",
]
ENTRY_KEYS = ["id", "parentId", "timestamp", "message", "content", "summary", "firstKeptEntryId", "targetId"]
MESSAGE_KEYS = ["role", "content", "usage", "stopReason", "toolCallId", "toolName", "isError", "timestamp"]

messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "bashExecution", "custom"]) | json_values},
    optional={key: json_values for key in MESSAGE_KEYS[1:]},
)
entries = st.fixed_dictionaries(
    {"type": st.sampled_from(ENTRY_TYPES) | json_values},
    optional={**{key: json_values for key in ENTRY_KEYS}, "message": messages},
)
session_line = st.one_of(
    entries.map(lambda e: json.dumps(e).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b" ")),
    entries.map(lambda e: json.dumps(e).encode()[: max(1, len(json.dumps(e)) // 2)]),
)


def seeded(campaign: Campaign) -> tuple[Any, bytes]:
    path = campaign.seed_session()
    return path, path.read_bytes()


def check_session(campaign: Campaign, path: Any, base: bytes, lines: list[bytes], *, real: bool) -> None:
    head, tail = base.split(b"\n", 2)[:2], base.split(b"\n", 2)[2]
    data = b"\n".join([*head, *lines, tail])
    path.write_bytes(data)
    campaign.server.add(Turn(text="ok"))
    args = (*MODEL, "--session", str(path), "-p", "next")
    if real:
        campaign.process_check(*args, max_error_lines=50)
    else:
        campaign.run_check(*args, max_error_lines=50)
    assert count_lost(data, path.read_bytes()) == 0


def test_fuzzed_session_lines(campaign: Campaign) -> None:
    path, base = seeded(campaign)

    @FUZZ
    @given(st.lists(session_line, min_size=1, max_size=5))
    def run(lines: list[bytes]) -> None:
        check_session(campaign, path, base, lines, real=False)

    run()


def test_fuzzed_session_lines_in_a_real_process(campaign: Campaign) -> None:
    path, base = seeded(campaign)

    @FEW
    @given(st.lists(session_line, min_size=3, max_size=8))
    def run(lines: list[bytes]) -> None:
        check_session(campaign, path, base, lines, real=True)

    run()


provider_fields = st.fixed_dictionaries(
    {},
    optional={
        key: json_values
        for key in ("baseUrl", "api", "apiKey", "headers", "compat", "authHeader", "models", "modelOverrides")
    },
)
model_fields = st.fixed_dictionaries(
    {"id": st.text(max_size=10) | json_values},
    optional={
        key: json_values
        for key in (
            "name",
            "api",
            "reasoning",
            "input",
            "contextWindow",
            "maxTokens",
            "cost",
            "compat",
            "headers",
        )
    },
)
models_documents = st.one_of(
    json_values,
    st.fixed_dictionaries({"providers": json_values}),
    st.fixed_dictionaries({"providers": st.dictionaries(st.text(max_size=8), provider_fields, max_size=3)}),
    st.fixed_dictionaries(
        {
            "providers": st.fixed_dictionaries(
                {"local": st.fixed_dictionaries({"models": st.lists(model_fields, max_size=3)})}
            )
        }
    ),
)


def check_config(campaign: Campaign, name: str, data: bytes, *, real: bool = False) -> None:
    path = campaign.agent_dir / name
    path.write_bytes(data)
    campaign.server.add(Turn(text="ok"))
    if real:
        campaign.process_check(*MODEL, "-p", "hi")
    else:
        campaign.run_check(*MODEL, "-p", "hi")
    assert path.read_bytes() == data


def test_fuzzed_models_json(campaign: Campaign) -> None:
    (campaign.agent_dir / "settings.json").write_text(
        '{"retry": {"enabled": false, "provider": {"maxRetries": 0}}}'
    )

    @FUZZ
    @given(models_documents)
    def run(document: Any) -> None:
        check_config(campaign, "models.json", json.dumps(document).encode())

    run()


SETTINGS_KEYS = [
    "defaultProvider",
    "defaultModel",
    "defaultThinkingLevel",
    "steeringMode",
    "followUpMode",
    "transport",
    "toolExecution",
    "shellPath",
    "sessionDir",
    "extensions",
    "skills",
    "prompts",
    "packages",
    "enabledModels",
    "thinkingBudgets",
    "compaction",
    "retry",
    "branchSummary",
    "images",
    "terminal",
    "markdown",
    "queueMode",
    "websockets",
]
settings_documents = st.one_of(
    json_values,
    st.fixed_dictionaries({}, optional={key: json_values for key in SETTINGS_KEYS}),
    st.fixed_dictionaries(
        {
            "retry": st.fixed_dictionaries(
                {"enabled": st.just(False)}, optional={"provider": json_values, "maxRetries": json_values}
            )
        },
        optional={
            "compaction": st.dictionaries(
                st.sampled_from(["enabled", "reserveTokens", "keepRecentTokens"]), json_values
            )
        },
    ),
)


def test_fuzzed_settings_json(campaign: Campaign) -> None:
    @FUZZ
    @given(settings_documents)
    def run(document: Any) -> None:
        if isinstance(document, dict) and "retry" in document:  # no waiting on retries of a fine reply
            document = {**document, "retry": {"enabled": False}}
        check_config(campaign, "settings.json", json.dumps(document).encode())

    run()


def test_fuzzed_config_bytes_in_a_real_process(campaign: Campaign) -> None:
    @FEW
    @given(st.sampled_from(["models.json", "settings.json", "auth.json"]), st.binary(max_size=300))
    def run(name: str, data: bytes) -> None:
        check_config(campaign, name, data, real=True)
        (campaign.agent_dir / name).unlink()
        if name == "models.json":  # put back the working one
            campaign.agent_dir.joinpath("models.json").write_text(models_json)

    models_json = (campaign.agent_dir / "models.json").read_text()
    run()
