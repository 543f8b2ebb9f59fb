"""DRF's content negotiation with the common case answered at once: no `Accept` header,
`*/*`, or exactly the first renderer's media type, with no `?format=` and no format suffix,
selects the first renderer with its media type, as DRF's DefaultContentNegotiation does after
parsing and ordering the header; every other request goes through DRF's own."""

from collections.abc import Iterable

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        if renderers and not format_suffix:
            first = renderers[0]
            accept = request.META.get("HTTP_ACCEPT", "*/*")
            if accept in ("*/*", first.media_type) and self.settings.URL_FORMAT_OVERRIDE not in request.GET:
                return first, first.media_type
        return super().select_renderer(request, renderers, format_suffix)
