"""A self-signed certificate for ``localhost`` and 127.0.0.1 (tests only), made by ``openssl``."""

from __future__ import annotations

import subprocess
from pathlib import Path


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """Write ``cert.pem`` and ``key.pem`` into ``folder`` (valid two days); their paths."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def server_context(certificate: tuple[Path, Path]) -> object:
    """A server-side TLS context presenting ``certificate`` (cert, key)."""
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    return context
