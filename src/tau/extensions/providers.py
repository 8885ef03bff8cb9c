"""Installing the providers extensions register: stream functions in ``tau.ai``'s api registry,
configs in the model registry (a ``ProviderSink``).

Registrations made while extensions load wait until the runtime calls ``install_all`` (once the
model registry exists); later ones are installed at once. Each registration gets its own
``source_id`` in the api registry, so unregistering one provider, or disposing the runner,
removes exactly what it added, and an api it overrode (a built-in, say) is served as before.
"""

from __future__ import annotations

import itertools
import logging

from tau.ai.registry import ApiProvider, register_api_provider, unregister_api_providers
from tau.extensions.errors import ExtensionDiagnostic, describe_exception
from tau.extensions.host import ProviderSink
from tau.extensions.types import ProviderRegistration

__all__ = ["ProviderInstaller"]

_log = logging.getLogger("tau.extensions")
_serials = itertools.count(1)


class ProviderInstaller:
    """The provider side of one runner."""

    def __init__(self) -> None:
        self._serial = next(_serials)
        self._sink: ProviderSink | None = None
        self.open = False
        """Whether registrations are installed as they come (after ``install_all``)."""

    def source_id(self, registration: ProviderRegistration) -> str:
        return f"tau-extension:{self._serial}:{registration.path}:{registration.name}"

    def install_all(
        self, sink: ProviderSink | None, registrations: list[ProviderRegistration]
    ) -> list[ExtensionDiagnostic]:
        self._sink = sink
        self.open = True
        problems = [self.install(r) for r in registrations]
        return [p for p in problems if p is not None]

    def install(self, registration: ProviderRegistration) -> ExtensionDiagnostic | None:
        """Register the config (a refusal is returned as a diagnostic), then the stream functions."""
        if self._sink is not None:
            try:
                self._sink.register_provider(
                    registration.name, registration.config, classifiers=registration.classifiers
                )
            except Exception as error:
                return ExtensionDiagnostic(
                    "error",
                    f"provider {registration.name!r} was refused: {describe_exception(error)}",
                    registration.extension,
                    registration.path,
                )
        stream, simple = registration.stream, registration.stream_simple
        if stream is not None or simple is not None:
            api = str(registration.config["api"])
            # Both signatures take (model, context, options); one function may serve for both.
            provider = ApiProvider(api, stream or simple, simple or stream)  # type: ignore[arg-type]
            register_api_provider(provider, self.source_id(registration))
        return None

    def remove(self, registration: ProviderRegistration) -> None:
        unregister_api_providers(self.source_id(registration))
        if self._sink is not None:
            try:
                self._sink.unregister_provider(registration.name)
            except Exception:
                _log.exception("could not unregister provider %r", registration.name)

    def close(self, registrations: list[ProviderRegistration]) -> None:
        if self.open:
            for registration in registrations:
                self.remove(registration)
        self.open = False
