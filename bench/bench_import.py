"""Start-up cost: `import tau.ai` and `tau --version` against a bare interpreter."""

from __future__ import annotations

from _common import PYTHON, Figure, time_command


def run(repeat: int) -> list[Figure]:
    repeat = max(repeat, 9)
    bare, _bare_rss = time_command([PYTHON, "-c", "pass"], repeat)
    ai, ai_rss = time_command([PYTHON, "-c", "import tau.ai"], repeat)
    version, version_rss = time_command([PYTHON, "-m", "tau", "--version"], repeat)
    return [
        Figure("python -c pass", bare * 1000, "ms"),
        Figure("python -c 'import tau.ai'", ai * 1000, "ms"),
        Figure("import tau.ai over bare python", (ai - bare) * 1000, "ms", "<= 100 ms"),
        Figure("peak RSS, import tau.ai", ai_rss, "MiB"),
        Figure("python -m tau --version", version * 1000, "ms", "<= 150 ms"),
        Figure("peak RSS, tau --version", version_rss, "MiB", "<= 40 MiB"),
    ]
