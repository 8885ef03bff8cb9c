"""Regenerate tau's model catalogue (``src/tau/ai/data/models.json``) from a published pi-ai package.

A maintainer runs this by hand when pi publishes a new catalogue; it never runs at install time or
at runtime, and tests only read the checked-in file.

How to run (node >= 18 must be on PATH; the generated module is plain data, it imports nothing)::

    cd /tmp && npm pack @earendil-works/pi-ai@1.6.0       # -> earendil-works-pi-ai-1.6.0.tgz
    cd /work/main
    .venv/bin/python scripts/generate_catalogue.py /tmp/earendil-works-pi-ai-1.6.0.tgz
    # or an unpacked folder: the tarball's ``package/`` directory, or the folder holding it
    .venv/bin/python scripts/generate_catalogue.py /tmp/package --output some/other/models.json

The script imports ``dist/models.generated.js`` with node, prints its ``MODELS`` constant as JSON,
validates every entry and writes ``{"<provider>": {"<model id>": Model}}`` with providers and ids
sorted and each model's keys in pi's field order (the order ``tau.ai.types.Model.to_json`` emits),
one provider per line without spaces. Only data is taken from the package, never code.

Since pi-ai 1.x every entry carries ``type: "chat"`` (``MODELS`` holds only chat models; image and
classifier models live in other constants): it is checked and dropped, as pi treats a missing type
as chat. The ``radius`` router's listing fields (``lab``, ``enabled``, ``providers``, ``free``) are
not part of pi's ``Model`` type and are dropped too.

The image models (``IMAGE_MODELS``: OpenRouter's, which codemode scripts run with
``models.generateImages()``) go to ``image_models.json`` beside it, in the same layout; each entry's
``type: "image"`` is checked and dropped (``tau.ai.image_models`` puts it back), and the fields are
pi's ``ImageModel``: ``id name api provider baseUrl input output cost`` and optionally
``inputLimits``/``headers``. The classifier models (``CLASSIFIER_MODELS``, which codemode scripts
run with ``models.classify()``) go to ``classifier_models.json`` the same way: ``type:
"classifier"`` checked and dropped (``tau.ai.classifier_models`` puts it back), and the fields are
pi's ``ClassifierModel``: ``id name api provider baseUrl input cost contextWindow`` and optionally
``headers``/``compat``/``inputLimits`` (``cost`` may carry ``tiers``).

Validation (any failure aborts without writing): every required field present with the right type,
no unknown fields, ``provider``/``id`` agree with their keys, ``api`` is one of ``KNOWN_APIS``,
``contextWindow`` and ``maxTokens`` are positive integers, ``input`` is a subset of text/image that
contains text, ``baseUrl`` is non-empty except for Azure (resolved from the environment at request
time). Oddities that pi ships on purpose are printed as warnings, not errors: negative prices
(OpenRouter's ``-1``-per-token sentinel for router models; ``calculate_cost`` clamps them) and
``maxTokens`` larger than ``contextWindow``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "src" / "tau" / "ai" / "data" / "models.json"
IMAGE_OUTPUT_NAME = "image_models.json"
IMAGE_APIS = frozenset({"openrouter-images"})
IMAGE_REQUIRED_FIELDS = ("id", "name", "api", "provider", "baseUrl", "input", "output", "cost")
IMAGE_OPTIONAL_FIELDS = ("headers", "inputLimits")
CLASSIFIER_OUTPUT_NAME = "classifier_models.json"
CLASSIFIER_APIS = frozenset(
    {"typesafe-system-one", "cloudflare-workers-ai-system-one", "openai-decisions", "llama-cpp-classify"}
)
CLASSIFIER_REQUIRED_FIELDS = ("id", "name", "api", "provider", "baseUrl", "input", "cost", "contextWindow")
CLASSIFIER_OPTIONAL_FIELDS = ("headers", "compat", "inputLimits")

KNOWN_APIS = frozenset(
    {
        "anthropic-messages",
        "azure-openai-responses",
        "bedrock-converse-stream",
        "google-generative-ai",
        "google-vertex",
        "mistral-conversations",
        "openai-codex-responses",
        "openai-completions",
        "openai-responses",
        "pi-messages",
    }
)

# pi's Model field order; required fields first.
REQUIRED_FIELDS = (
    "id",
    "name",
    "api",
    "provider",
    "baseUrl",
    "reasoning",
    "input",
    "cost",
    "contextWindow",
    "maxTokens",
)
OPTIONAL_FIELDS = ("headers", "compat", "thinkingLevelMap", "inputLimits", "promptCache")
# Checked, then left out of the catalogue (see the module docstring).
DROPPED_FIELDS = ("type", "lab", "enabled", "providers", "free")
COST_FIELDS = ("input", "output", "cacheRead", "cacheWrite")
THINKING_LEVELS = frozenset({"off", "minimal", "low", "medium", "high", "xhigh", "max"})

_DUMP_MODELS_JS = """
const { pathToFileURL } = await import("node:url");
const mod = await import(pathToFileURL(process.env.PI_MODELS_FILE).href);
process.stdout.write(JSON.stringify({
  chat: mod.MODELS, image: mod.IMAGE_MODELS ?? {}, classifier: mod.CLASSIFIER_MODELS ?? {},
}));
"""


def find_models_file(root: Path) -> Path:
    """Locate ``dist/models.generated.js`` in an unpacked package (``package/`` or its parent)."""
    for candidate in (
        root / "dist" / "models.generated.js",
        root / "package" / "dist" / "models.generated.js",
    ):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"no dist/models.generated.js under {root}")


def read_package_version(models_file: Path) -> str:
    package_json = models_file.parent.parent / "package.json"
    try:
        return str(json.loads(package_json.read_text(encoding="utf-8"))["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def dump_models_with_node(models_file: Path) -> Any:
    """Import the generated module in node and return ``{"chat": MODELS, "image": IMAGE_MODELS,
    "classifier": CLASSIFIER_MODELS}``."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH; it is needed to read models.generated.js")
    result = subprocess.run(
        [node, "--input-type=module", "-e", _DUMP_MODELS_JS],
        env={"PI_MODELS_FILE": str(models_file), "PATH": ""},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if result.returncode != 0:
        raise SystemExit(f"node failed to import {models_file}:\n{result.stderr}")
    return json.loads(result.stdout)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def validate_model(provider: str, model_id: str, model: Any) -> tuple[list[str], list[str]]:
    """Return (errors, warnings) for one catalogue entry."""
    where = f"{provider}/{model_id}"
    if not isinstance(model, dict):
        return [f"{where}: entry is not an object"], []
    errors: list[str] = []
    warnings: list[str] = []
    missing = [name for name in REQUIRED_FIELDS if name not in model]
    unknown = sorted(set(model) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS) - set(DROPPED_FIELDS))
    if missing:
        errors.append(f"{where}: missing fields {missing}")
    if unknown:
        errors.append(f"{where}: unknown fields {unknown} (teach this script and tau.ai.types.Model)")
    if missing:
        return errors, warnings

    if model.get("type", "chat") != "chat":
        errors.append(f"{where}: type {model['type']!r} is not a chat model")
    if model["id"] != model_id:
        errors.append(f"{where}: id {model['id']!r} differs from its key")
    if model["provider"] != provider:
        errors.append(f"{where}: provider {model['provider']!r} differs from its key")
    if not isinstance(model["name"], str) or not model["name"]:
        errors.append(f"{where}: name must be a non-empty string")
    if model["api"] not in KNOWN_APIS:
        errors.append(f"{where}: unknown api {model['api']!r}")
    base_url = model["baseUrl"]
    if not isinstance(base_url, str) or (not base_url and provider != "azure"):
        errors.append(f"{where}: baseUrl must be a non-empty string (empty only for Azure)")
    if not isinstance(model["reasoning"], bool):
        errors.append(f"{where}: reasoning must be a boolean")
    inputs = model["input"]
    if not isinstance(inputs, list) or "text" not in inputs or not set(inputs) <= {"text", "image"}:
        errors.append(f"{where}: input must be a subset of ['text', 'image'] containing 'text': {inputs!r}")

    cost = model["cost"]
    if not isinstance(cost, dict) or set(cost) - {"tiers"} != set(COST_FIELDS):
        errors.append(f"{where}: cost must have exactly {list(COST_FIELDS)} (and tiers): {cost!r}")
    elif not all(_is_number(cost[name]) for name in COST_FIELDS):
        errors.append(f"{where}: cost values must be numbers: {cost!r}")
    else:
        if any(cost[name] < 0 for name in COST_FIELDS):
            warnings.append(f"{where}: negative price {cost!r}")
        errors.extend(_tier_errors(where, cost.get("tiers", [])))

    if not _is_positive_int(model["contextWindow"]):
        errors.append(f"{where}: contextWindow must be a positive integer: {model['contextWindow']!r}")
    if not _is_positive_int(model["maxTokens"]):
        errors.append(f"{where}: maxTokens must be a positive integer: {model['maxTokens']!r}")
    if (
        _is_positive_int(model["contextWindow"])
        and _is_positive_int(model["maxTokens"])
        and model["maxTokens"] > model["contextWindow"]
    ):
        warnings.append(
            f"{where}: maxTokens {model['maxTokens']} exceeds contextWindow {model['contextWindow']}"
        )

    headers = model.get("headers")
    if headers is not None and not (
        isinstance(headers, dict) and all(isinstance(v, str) for v in headers.values())
    ):
        errors.append(f"{where}: headers must map strings to strings")
    if "compat" in model and not isinstance(model["compat"], dict):
        errors.append(f"{where}: compat must be an object")
    level_map = model.get("thinkingLevelMap")
    if level_map is not None and not (
        isinstance(level_map, dict)
        and set(level_map) <= THINKING_LEVELS
        and all(v is None or isinstance(v, str) for v in level_map.values())
    ):
        errors.append(f"{where}: thinkingLevelMap must map thinking levels to strings or null")
    for name in ("inputLimits", "promptCache"):
        if name in model and not isinstance(model[name], dict):
            errors.append(f"{where}: {name} must be an object")
    return errors, warnings


def _tier_errors(where: str, tiers: Any) -> list[str]:
    if not isinstance(tiers, list):
        return [f"{where}: cost tiers must be a list"]
    for tier in tiers:
        if not (
            isinstance(tier, dict)
            and set(tier) == {"inputTokensAbove", *COST_FIELDS}
            and _is_positive_int(tier["inputTokensAbove"])
            and all(_is_number(tier[name]) for name in COST_FIELDS)
        ):
            return [
                f"{where}: each cost tier needs a positive inputTokensAbove and the four prices: {tier!r}"
            ]
    return []


def normalise_model(model: dict[str, Any]) -> dict[str, Any]:
    """The entry with its keys in pi's field order (the order ``Model.to_json`` emits)."""
    ordered = {name: model[name] for name in REQUIRED_FIELDS}
    ordered["cost"] = {name: model["cost"][name] for name in COST_FIELDS}
    if model["cost"].get("tiers"):
        ordered["cost"]["tiers"] = [
            {name: tier[name] for name in ("inputTokensAbove", *COST_FIELDS)}
            for tier in model["cost"]["tiers"]
        ]
    for name in OPTIONAL_FIELDS:
        if name in model:
            ordered[name] = model[name]
    return ordered


def build_catalogue(raw: Any) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Validate pi's ``MODELS`` and return (sorted catalogue, warnings); exit on any error."""
    if not isinstance(raw, dict) or not raw:
        raise SystemExit("MODELS is not a non-empty object")
    errors: list[str] = []
    warnings: list[str] = []
    catalogue: dict[str, dict[str, Any]] = {}
    for provider in sorted(raw):
        models = raw[provider]
        if not isinstance(models, dict):
            errors.append(f"{provider}: expected an object of models")
            continue
        if not models:
            # pi lists providers that have only image or classifier models (typesafe) with no chat models.
            warnings.append(f"{provider}: no chat models, left out")
            continue
        catalogue[provider] = {}
        for model_id in sorted(models):
            entry_errors, entry_warnings = validate_model(provider, model_id, models[model_id])
            errors.extend(entry_errors)
            warnings.extend(entry_warnings)
            if not entry_errors:
                catalogue[provider][model_id] = normalise_model(models[model_id])
    if errors:
        raise SystemExit("catalogue validation failed:\n  " + "\n  ".join(errors))
    return catalogue, warnings


def validate_image_model(provider: str, model_id: str, model: Any) -> list[str]:
    """The errors of one ``IMAGE_MODELS`` entry."""
    where = f"{provider}/{model_id} (image)"
    if not isinstance(model, dict):
        return [f"{where}: entry is not an object"]
    errors: list[str] = []
    missing = [name for name in IMAGE_REQUIRED_FIELDS if name not in model]
    unknown = sorted(set(model) - set(IMAGE_REQUIRED_FIELDS) - set(IMAGE_OPTIONAL_FIELDS) - {"type"})
    if missing:
        return [f"{where}: missing fields {missing}"]
    if unknown:
        errors.append(f"{where}: unknown fields {unknown} (teach this script and tau.ai.image_models)")
    if model.get("type") != "image":
        errors.append(f"{where}: type {model.get('type')!r} is not 'image'")
    if model["id"] != model_id or model["provider"] != provider:
        errors.append(f"{where}: id or provider differs from its key")
    if model["api"] not in IMAGE_APIS:
        errors.append(f"{where}: unknown image api {model['api']!r}")
    if not isinstance(model["baseUrl"], str) or not model["baseUrl"]:
        errors.append(f"{where}: baseUrl must be a non-empty string")
    for name in ("input", "output"):
        value = model[name]
        if not isinstance(value, list) or not value or not set(value) <= {"text", "image"}:
            errors.append(f"{where}: {name} must be a non-empty subset of ['text', 'image']: {value!r}")
    cost = model["cost"]
    if (
        not isinstance(cost, dict)
        or set(cost) != set(COST_FIELDS)
        or not all(_is_number(v) for v in cost.values())
    ):
        errors.append(f"{where}: cost must have exactly {list(COST_FIELDS)} as numbers: {cost!r}")
    return errors


def build_image_catalogue(raw: Any) -> dict[str, dict[str, Any]]:
    """Validate pi's ``IMAGE_MODELS`` and return it sorted, without ``type``; exit on any error."""
    if not isinstance(raw, dict):
        raise SystemExit("IMAGE_MODELS is not an object")
    errors: list[str] = []
    catalogue: dict[str, dict[str, Any]] = {}
    for provider in sorted(raw):
        models = raw[provider]
        if not isinstance(models, dict):
            errors.append(f"{provider}: expected an object of image models")
            continue
        for model_id in sorted(models):
            entry = models[model_id]
            entry_errors = validate_image_model(provider, model_id, entry)
            errors.extend(entry_errors)
            if not entry_errors:
                ordered = {name: entry[name] for name in IMAGE_REQUIRED_FIELDS}
                ordered["cost"] = {name: entry["cost"][name] for name in COST_FIELDS}
                ordered.update({name: entry[name] for name in IMAGE_OPTIONAL_FIELDS if name in entry})
                catalogue.setdefault(provider, {})[model_id] = ordered
    if errors:
        raise SystemExit("image catalogue validation failed:\n  " + "\n  ".join(errors))
    return catalogue


def render(catalogue: dict[str, dict[str, Any]]) -> str:
    """Compact JSON, one provider per line, so diffs stay readable per provider."""
    lines = [
        json.dumps(provider, ensure_ascii=False)
        + ":"
        + json.dumps(models, ensure_ascii=False, separators=(",", ":"))
        for provider, models in catalogue.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def validate_classifier_model(provider: str, model_id: str, model: Any) -> list[str]:
    """The errors of one ``CLASSIFIER_MODELS`` entry."""
    where = f"{provider}/{model_id} (classifier)"
    if not isinstance(model, dict):
        return [f"{where}: entry is not an object"]
    errors: list[str] = []
    missing = [name for name in CLASSIFIER_REQUIRED_FIELDS if name not in model]
    known = set(CLASSIFIER_REQUIRED_FIELDS) | set(CLASSIFIER_OPTIONAL_FIELDS) | {"type"}
    unknown = sorted(set(model) - known)
    if missing:
        return [f"{where}: missing fields {missing}"]
    if unknown:
        errors.append(f"{where}: unknown fields {unknown} (teach this script and tau.ai.classifier_models)")
    if model.get("type") != "classifier":
        errors.append(f"{where}: type {model.get('type')!r} is not 'classifier'")
    if model["id"] != model_id or model["provider"] != provider:
        errors.append(f"{where}: id or provider differs from its key")
    if model["api"] not in CLASSIFIER_APIS:
        errors.append(f"{where}: unknown classifier api {model['api']!r}")
    if not isinstance(model["baseUrl"], str) or not model["baseUrl"]:
        errors.append(f"{where}: baseUrl must be a non-empty string")
    value = model["input"]
    if not isinstance(value, list) or "text" not in value or not set(value) <= {"text", "image"}:
        errors.append(f"{where}: input must be a subset of ['text', 'image'] containing 'text': {value!r}")
    window = model["contextWindow"]
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        errors.append(f"{where}: contextWindow must be a positive integer: {window!r}")
    cost = model["cost"]
    if (
        not isinstance(cost, dict)
        or not set(COST_FIELDS) <= set(cost) <= set(COST_FIELDS) | {"tiers"}
        or not all(_is_number(cost[name]) for name in COST_FIELDS)
        or not isinstance(cost.get("tiers", []), list)
    ):
        errors.append(
            f"{where}: cost must have {list(COST_FIELDS)} as numbers (and optional tiers): {cost!r}"
        )
    return errors


def build_classifier_catalogue(raw: Any) -> dict[str, dict[str, Any]]:
    """Validate pi's ``CLASSIFIER_MODELS`` and return it sorted, without ``type``; exit on any error."""
    if not isinstance(raw, dict):
        raise SystemExit("CLASSIFIER_MODELS is not an object")
    errors: list[str] = []
    catalogue: dict[str, dict[str, Any]] = {}
    for provider in sorted(raw):
        models = raw[provider]
        if not isinstance(models, dict):
            errors.append(f"{provider}: expected an object of classifier models")
            continue
        for model_id in sorted(models):
            entry = models[model_id]
            entry_errors = validate_classifier_model(provider, model_id, entry)
            errors.extend(entry_errors)
            if not entry_errors:
                ordered = {name: entry[name] for name in CLASSIFIER_REQUIRED_FIELDS}
                ordered.update({name: entry[name] for name in CLASSIFIER_OPTIONAL_FIELDS if name in entry})
                catalogue.setdefault(provider, {})[model_id] = ordered
    if errors:
        raise SystemExit("classifier catalogue validation failed:\n  " + "\n  ".join(errors))
    return catalogue


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("package", type=Path, help="pi-ai npm tarball (.tgz) or unpacked package folder")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as scratch:
        root: Path = args.package
        if root.is_file():
            with tarfile.open(root) as archive:
                archive.extractall(scratch, filter="data")
            root = Path(scratch)
        models_file = find_models_file(root)
        version = read_package_version(models_file)
        raw = dump_models_with_node(models_file)

    catalogue, warnings = build_catalogue(raw["chat"])
    images = build_image_catalogue(raw["image"])
    classifiers = build_classifier_catalogue(raw.get("classifier") or {})
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(catalogue), encoding="utf-8")
    image_output = args.output.with_name(IMAGE_OUTPUT_NAME)
    image_output.write_text(render(images), encoding="utf-8")
    classifier_output = args.output.with_name(CLASSIFIER_OUTPUT_NAME)
    classifier_output.write_text(render(classifiers), encoding="utf-8")
    count = sum(len(models) for models in catalogue.values())
    size_kb = args.output.stat().st_size / 1024
    print(f"pi-ai {version}: {len(catalogue)} providers, {count} models -> {args.output} ({size_kb:.0f} KB)")
    image_count = sum(len(models) for models in images.values())
    print(f"pi-ai {version}: {image_count} image models -> {image_output}")
    classifier_count = sum(len(models) for models in classifiers.values())
    print(f"pi-ai {version}: {classifier_count} classifier models -> {classifier_output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
