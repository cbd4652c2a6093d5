"""Pages sent in pieces: the head of a page leaves before its slow part is read.

A fresh browser tab spends its first ~100 ms on work that needs only the page's head:
committing the navigation, a new document and script context, the stylesheet and the
script from its cache. A page rendered whole makes that work wait for the store (a text
search or a filtered count over 100,000 results takes 50-100 ms); sent in pieces, the
browser does it while the server reads (issue 25: run pages under 300 ms in Chromium).

A template marks where a piece ends with ``{{ flush }}`` (``FLUSH``, an HTML comment the
browser ignores); everything up to it is sent at once. The status and headers leave with
the first piece, so a page checks everything that can refuse the request (unknown run,
bad query values) before it starts; what fails after that can only be said in the page:
a one-line error paragraph (the full error in the server log under the same id).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import Template
from markupsafe import Markup, escape

from assay.store import StoreError

log = logging.getLogger("assay.server")

FLUSH = Markup("<!-- flush -->")
"""Put in a template (``{{ flush }}``): send what is rendered so far."""


def template_pieces(template: Template, context: Mapping[str, Any]) -> Iterator[str]:
    """``template`` rendered with ``context``, one string per ``FLUSH`` (the last piece:
    the rest). Jinja renders lazily, so whatever the template calls after a ``FLUSH`` (a
    store query) runs after the piece before it has been handed on."""
    buffer: list[str] = []
    try:
        for piece in template.generate(context):
            buffer.append(piece)
            if piece == FLUSH:  # Jinja yields each ``{{ ... }}`` as a piece of its own
                yield "".join(buffer)
                buffer = []
    except Exception as error:
        # the status line is sent: say it in the page, where the reader is looking
        error_id = uuid.uuid4().hex[:12]
        log.exception("error %s while streaming %s", error_id, template.name)
        said = str(error) if isinstance(error, StoreError | ValueError) else "internal error"
        buffer.append(
            f'<p class="error" role="alert" data-testid="page-error">This page could not be '
            f"completed: {escape(said)} (error id {error_id}, see the server log).</p>"
        )
    if buffer:
        yield "".join(buffer)
