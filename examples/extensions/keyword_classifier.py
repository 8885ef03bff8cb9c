"""A classifier model of your own: questions answered by matching words, with no service behind it.

pi's ``registerProvider(name, {models, classifiers})`` in tau: ``register_provider`` takes the
provider's classifier models (``models`` entries with ``"type": "classifier"``) and, in
``classifiers``, the function that speaks their api. The ``keywords`` provider brings one model,
``keywords/matcher`` (api ``keyword-match``); codemode scripts (``models.classify``) and extensions
(``ctx.model_registry.classify``) run it as they run a catalogue classifier such as TypeSafe's Jev:

    tau -e examples/extensions/keyword_classifier.py --tools +codemode

A ``choice`` question picks the option whose criterion shares the most words with the state; a
``bool`` question is as likely as its ``true`` criterion's words are, against its ``false`` one's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tau.ai.classifier_models import ClassifierModel
from tau.ai.classify import BoolAnswer, ChoiceAnswer, ClassifierAnswer, ClassifierContext, ClassifierResult
from tau.ai.options import StreamOptions
from tau.extensions import ExtensionAPI

API = "keyword-match"
MATCHER = {
    "type": "classifier",
    "id": "matcher",
    "name": "Keyword matcher",
    "api": API,
    "input": ["text"],
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
    "contextWindow": 100_000,
}


def words(value: Any) -> set[str]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return set(re.findall(r"\w+", text.lower()))


def probabilities(state: set[str], criteria: dict[str, Any]) -> dict[str, float]:
    """Each option's share of the matching words (one more for each, so none is impossible)."""
    matches = {label: len(words(criterion) & state) + 1 for label, criterion in criteria.items()}
    total = sum(matches.values())
    return {label: count / total for label, count in matches.items()}


async def classify(
    model: ClassifierModel, context: ClassifierContext, options: StreamOptions
) -> ClassifierResult:
    state = words(context.state)
    answers: dict[str, ClassifierAnswer] = {}
    for question_id, question in context.questions.items():
        kind = question.get("type")
        if kind == "bool":
            shares = probabilities(state, question["criteria"])
            answers[question_id] = BoolAnswer(probability=shares["true"])
        elif kind == "choice":
            shares = probabilities(state, question["criteria"])
            best = max(shares, key=lambda label: shares[label])
            answers[question_id] = ChoiceAnswer(choice=best, probabilities=shares, confidence=shares[best])
        else:
            return ClassifierResult(
                api=model.api,
                provider=model.provider,
                model=model.id,
                stop_reason="error",
                error_message=f"{model.id} answers choice and bool questions, not {kind!r}",
            )
    return ClassifierResult(api=model.api, provider=model.provider, model=model.id, answers=answers)


def setup(tau: ExtensionAPI) -> None:
    # A classification needs the provider's key, as pi's does; this one takes any.
    tau.register_provider(
        "keywords",
        {"baseUrl": "local://keywords", "apiKey": "unused", "models": [MATCHER]},
        classifiers={API: classify},
    )
