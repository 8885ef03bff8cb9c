"""Finding a GGUF model on Hugging Face for ``/llama``'s "Download model…" (pi 1.6's
``docs/llama-cpp.md``): a search of the hub's GGUF repositories by downloads, a repository's
quantizations with their sizes, and the token the search sends.

The token is ``HF_TOKEN``, else the first file of ``$HF_TOKEN_PATH``, ``$HF_HOME/token``,
``$XDG_CACHE_HOME/huggingface/token``, ``~/.cache/huggingface/token`` that holds one (pi's order);
without one the search works with the hub's lower rate limits. The hub is ``HF_ENDPOINT`` when set
(the Hugging Face tools' variable, for a mirror; pi 1.6 always asks huggingface.co).
Every failure is a ``HuggingFaceError`` with one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from tau.llama_cpp.client import LlamaError

__all__ = [
    "DEFAULT_ENDPOINT",
    "HubModel",
    "HuggingFaceClient",
    "HuggingFaceError",
    "Quantization",
    "RepositoryDetails",
    "find_token",
]

DEFAULT_ENDPOINT = "https://huggingface.co"
_TIMEOUT_S = 15.0
# The quantization a GGUF file's name ends with (``model-Q4_K_M.gguf``, ``UD-IQ2_XXS``, ``BF16``).
_QUANTIZATION = re.compile(
    r"(?:^|[-_.])((?:UD-)?(?:IQ\d(?:_[A-Z0-9]+)+|Q\d(?:_[A-Z0-9]+)+|BF16|F16|F32|MXFP\d(?:_[A-Z0-9]+)*))$",
    re.IGNORECASE,
)
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")
RECOMMENDED = "Q4_K_M"


class HuggingFaceError(LlamaError):
    """One line saying what went wrong with the hub."""


class HubModel:
    __slots__ = ("downloads", "id")

    def __init__(self, id: str, downloads: int) -> None:
        self.id = id
        self.downloads = downloads


class Quantization:
    __slots__ = ("name", "size")

    def __init__(self, name: str, size: int | None) -> None:
        self.name = name
        self.size = size
        """Bytes of all its files; ``None`` when the hub did not say for one of them."""


class RepositoryDetails:
    __slots__ = ("gated", "id", "quantizations")

    def __init__(self, id: str, gated: str | None, quantizations: list[Quantization]) -> None:
        self.id = id
        self.gated = gated
        """``"auto"`` (accept the terms) or ``"manual"`` (approval), ``None`` when open."""
        self.quantizations = quantizations


def find_token(env: Mapping[str, str] | None = None) -> str | None:
    environ = os.environ if env is None else env
    direct = (environ.get("HF_TOKEN") or "").strip()
    if direct:
        return direct
    candidates = [
        environ.get("HF_TOKEN_PATH") or None,
        os.path.join(environ["HF_HOME"], "token") if environ.get("HF_HOME") else None,
        os.path.join(environ["XDG_CACHE_HOME"], "huggingface", "token")
        if environ.get("XDG_CACHE_HOME")
        else None,
        os.path.join(Path.home(), ".cache", "huggingface", "token"),
    ]
    for path in dict.fromkeys(p for p in candidates if p):
        try:
            token = Path(path).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if token:
            return token
    return None


class HuggingFaceClient:
    def __init__(self, token: str | None, endpoint: str | None = None) -> None:
        self.token = token
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")

    async def _get(self, path: str) -> Any:
        import httpx

        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            async with httpx.AsyncClient(timeout=_TIMEOUT_S, trust_env=False) as http:
                response = await http.get(self.endpoint + path, headers=headers)
        except httpx.HTTPError as exc:
            raise HuggingFaceError(
                f"Could not reach Hugging Face at {self.endpoint}: {str(exc) or type(exc).__name__}"
            ) from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code == 429:
            delay = response.headers.get("retry-after") or _ratelimit_delay(response.headers.get("ratelimit"))
            raise HuggingFaceError(
                f"Hugging Face rate limit reached; retry in {delay}s"
                if delay
                else "Hugging Face rate limit reached"
            )
        if response.is_error:
            error = payload.get("error") if isinstance(payload, dict) else None
            raise HuggingFaceError(
                error
                if isinstance(error, str) and error
                else f"Hugging Face returned HTTP {response.status_code}"
            )
        return payload

    async def search(self, query: str) -> list[HubModel]:
        """The 20 most downloaded GGUF repositories matching ``query``."""
        params = urlencode(
            {"search": query, "filter": "gguf", "sort": "downloads", "direction": "-1", "limit": "20"}
        )
        payload = await self._get(f"/api/models?{params}")
        if not isinstance(payload, list):
            raise HuggingFaceError("Hugging Face returned invalid search results")
        return [
            HubModel(m["id"], m["downloads"] if isinstance(m.get("downloads"), int) else 0)
            for m in payload
            if isinstance(m, dict) and isinstance(m.get("id"), str)
        ]

    async def details(self, repository: str) -> RepositoryDetails:
        """The repository's quantizations (``Q4_K_M`` first, then by size) and whether it is gated."""
        payload = await self._get(f"/api/models/{quote(repository, safe='/')}?blobs=true")
        if not isinstance(payload, dict):
            raise HuggingFaceError("Hugging Face returned invalid model details")
        sizes: dict[str, int | None] = {}
        siblings = payload.get("siblings")
        for file in siblings if isinstance(siblings, list) else []:
            name = file.get("rfilename") if isinstance(file, dict) else None
            if not isinstance(name, str) or not name.lower().endswith(".gguf"):
                continue
            base = name.rsplit("/", 1)[-1]
            if base.lower().startswith("mmproj"):
                continue
            found = _QUANTIZATION.search(_SHARD.sub("", base[:-5]))
            if found is None:
                continue
            quant = found.group(1).upper()
            size = file.get("size")
            known = sizes.get(quant, 0)
            sizes[quant] = known + size if isinstance(size, int) and known is not None else None
        ordered = sorted(
            sizes.items(),
            key=lambda item: (item[0] != RECOMMENDED, item[1] if item[1] is not None else 2**63, item[0]),
        )
        gated = payload.get("gated")
        return RepositoryDetails(
            payload["id"] if isinstance(payload.get("id"), str) else repository,
            gated if gated in ("auto", "manual") else None,
            [Quantization(name, size) for name, size in ordered],
        )


def _ratelimit_delay(value: str | None) -> str | None:
    found = re.search(r"(?:^|;)t=(\d+)", value or "")
    return found.group(1) if found else None
