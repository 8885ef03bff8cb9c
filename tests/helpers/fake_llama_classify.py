"""The fake llama.cpp router's classification endpoints (tests only), as ``llama-server`` answers
them: ``POST /tokenize`` (a toy tokenizer: a newline, a word, a digit or any other character is one
token, its id a checksum of the text), ``POST /apply-template`` (a plain chat template; a model in
``thinking`` opens ``<think>`` for the reply), ``POST /completion`` (the pre-sampling
log-probabilities of the ``n_probs`` most likely next tokens: fixed ones for the labels ``A``-``C``,
``Yes``/``No`` and the digits, below filler tokens that push every label but the best beyond the
first 256 for a model in ``deep``) and ``POST /v1/systemone`` (a decision model's System One
answers: a choice's first option at 0.9, a bool's 0.75, a score of 0.5)."""

from __future__ import annotations

import re
import zlib
from typing import Any

LABEL_LOGPROBS = {
    "A": -0.25,
    "B": -1.75,
    "C": -2.5,
    "Yes": -0.5,
    "No": -1.25,
    "0": -3.0,
    "1": -1.0,
    "2": -0.5,
    "3": -2.0,
}
_PIECES = re.compile(r"\n|[A-Za-z]+|\d|.", re.DOTALL)


def token_id(piece: str) -> int:
    return zlib.crc32(piece.encode()) % 1_000_000 + 1000


def tokenize(body: dict[str, Any]) -> dict[str, Any]:
    return {"tokens": [token_id(piece) for piece in _PIECES.findall(str(body.get("content", "")))]}


def apply_template(body: dict[str, Any], thinking: bool) -> dict[str, Any]:
    turns = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in body.get("messages", []))
    return {"prompt": f"{turns}<|assistant|>\n" + ("<think>" if thinking else "")}


def completion(body: dict[str, Any], deep: bool) -> dict[str, Any]:
    ranked = [(piece, logprob) for piece, logprob in LABEL_LOGPROBS.items()]
    if deep:  # 300 tokens more likely than every label but "A"
        ranked += [(f"filler{index}", -0.3 - index / 10_000) for index in range(300)]
    ranked.sort(key=lambda item: -item[1])
    top = [
        {"id": token_id(piece), "token": piece, "bytes": list(piece.encode()), "logprob": logprob}
        for piece, logprob in ranked[: int(body.get("n_probs", 0))]
    ]
    return {
        "content": ranked[0][0],
        "completion_probabilities": [{"id": top[0]["id"], "token": ranked[0][0], "top_logprobs": top}],
    }


def system_one(body: dict[str, Any]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for key, question in (body.get("questions") or {}).items():
        if question.get("type") == "choice":
            names = list(question.get("criteria") or {})
            rest = 0.1 / (len(names) - 1)
            probabilities = {name: 0.9 if index == 0 else rest for index, name in enumerate(names)}
            answers[key] = {
                "type": "choice",
                "choice": names[0],
                "probabilities": probabilities,
                "confidence": 0.9,
            }
        elif question.get("type") == "score":
            answers[key] = {"type": "score", "score": 0.5, "confidence": 0.8}
        else:
            answers[key] = {"type": "noul", "noul": 0.75}
    return {"answers": answers, "usage": {"input_tokens": 40, "output_tokens": 3}}
