"""tau: a minimal, hackable coding-agent harness for the terminal.

Subpackages are imported on demand so that ``import tau.ai`` stays fast.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
