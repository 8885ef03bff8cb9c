"""The Hugging Face part of ``/llama``'s download against a fake hub on 127.0.0.1: the token found
in pi's order, a repository's quantizations (shards summed, ``mmproj`` files left out, ``Q4_K_M``
first, an unknown size kept unknown) and the hub's errors as one line."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from fake_hugging_face import FakeHuggingFace

from tau.llama_cpp.hugging_face import HuggingFaceClient, HuggingFaceError, find_token


def test_the_token_is_found_in_pis_order(tmp_path: Path) -> None:
    def file(name: str, text: str) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return str(path)

    xdg = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    file("xdg/huggingface/token", "from-xdg\n")
    home = {**xdg, "HF_HOME": str(tmp_path / "hf")}
    file("hf/token", "  \n")  # empty: the next place is asked
    assert find_token(home) == "from-xdg"
    file("hf/token", "from-hf-home")
    assert find_token(home) == "from-hf-home"
    path = {**home, "HF_TOKEN_PATH": file("elsewhere", "from-path\n")}
    assert find_token(path) == "from-path"
    assert find_token({**path, "HF_TOKEN": " from-env "}) == "from-env"
    assert find_token({**path, "HF_TOKEN": "", "HF_TOKEN_PATH": str(tmp_path / "missing")}) == "from-hf-home"


def test_details_sum_shards_and_order_the_quantizations() -> None:
    hub = FakeHuggingFace(
        {
            "org/big-GGUF": {
                "downloads": 5,
                "gated": "manual",
                "files": {
                    "Q8_0/big-Q8_0-00001-of-00002.gguf": 300,
                    "Q8_0/big-Q8_0-00002-of-00002.gguf": 200,
                    "big-IQ2_XXS.gguf": 100,
                    "big-Q4_K_M.gguf": 400,
                    "big-UD-Q2_K_XL.gguf": None,
                    "mmproj-big-F16.gguf": 50,
                    "big.gguf": 10,  # no quantization in the name
                },
            }
        }
    )
    with hub:
        details = asyncio.run(HuggingFaceClient(None, hub.url).details("org/big-GGUF"))
    assert (details.id, details.gated) == ("org/big-GGUF", "manual")
    assert [(q.name, q.size) for q in details.quantizations] == [
        ("Q4_K_M", 400),
        ("IQ2_XXS", 100),
        ("Q8_0", 500),
        ("UD-Q2_K_XL", None),
    ]
    assert hub.requests == [("/api/models/org/big-GGUF?blobs=true", None)]  # no token: none sent


def test_a_missing_repository_and_an_unreachable_hub_are_one_line() -> None:
    with FakeHuggingFace({}) as hub:
        with pytest.raises(HuggingFaceError, match=r"^Repository not found$"):
            asyncio.run(HuggingFaceClient("t", hub.url).details("org/none"))
        url = hub.url
    with pytest.raises(HuggingFaceError, match=f"^Could not reach Hugging Face at {re.escape(url)}: "):
        asyncio.run(HuggingFaceClient("t", url).search("gemma"))
