"""A model prompt as the target: a Jinja2 template over the item, sent to a model.

The template sees ``input``, ``expected_output``, ``context``, ``metadata`` and ``id``, and,
when ``input`` is a dict, its keys directly (``{{ question }}``). Undefined names are errors
(``StrictUndefined``): a typo in a template fails the item loudly instead of sending a prompt
with a hole in it.

The item's output is the response text; its usage (tokens) and ``cost_usd`` come from the
response, so run summaries count what the target spent next to what the judges spent. With
``settings.n`` > 1 every sample is kept (``ItemResult.samples``) and the first is scored.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import TYPE_CHECKING, Any

from assay.models.base import ChatMessage, Model, ModelSettings
from assay.models.resolve import shippable_model
from assay.targets.base import TargetOutput
from assay.types import Item, TargetSpec

if TYPE_CHECKING:
    import jinja2

log = logging.getLogger(__name__)


@functools.cache
def _env() -> jinja2.Environment:
    """The one template environment, made (and Jinja2 imported) when a model prompt target
    is first built: a run without one does not pay for the import at its start."""
    import jinja2

    return jinja2.Environment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
    )


def constant_prompt_warning(prompt: str, system: str | None) -> str | None:
    """A warning when neither template names a variable: every item would get the same text
    (``"{input}"`` is Python format syntax, not Jinja's ``{{ input }}``). ``None`` otherwise."""
    import jinja2.meta

    used: set[str] = set()
    for text in (prompt, system or ""):
        used |= jinja2.meta.find_undeclared_variables(_env().parse(text))
    if used:
        return None
    single = re.search(r"(?<!\{)\{\s*(\w+)\s*\}(?!\})", prompt)
    hint = f"; write {{{{ {single.group(1)} }}}}, not {single.group()}" if single else ""
    return f"the model prompt uses no template variable, so every item is sent the same text{hint}"


class ModelPromptTarget:
    """``model.generate([system?, user=render(prompt, item)])`` → the response text."""

    def __init__(
        self,
        prompt: str,
        model: str | Model,
        *,
        system: str | None = None,
        settings: ModelSettings | None = None,
        base_url: str | None = None,
    ) -> None:
        import jinja2

        self._sources = (prompt, system)
        try:
            self.template = _env().from_string(prompt)
            self.system_template = _env().from_string(system) if system else None
        except jinja2.TemplateSyntaxError as exc:
            raise ValueError(
                f"model prompt target: template error line {exc.lineno}: {exc.message}"
            ) from exc
        self.constant_warning = constant_prompt_warning(prompt, system)
        if self.constant_warning is not None:
            log.warning("model prompt target: %s", self.constant_warning)
        self.model = shippable_model(model, base_url=base_url)
        self.settings = settings
        config: dict[str, Any] = {
            "prompt": prompt,
            "model": model if isinstance(model, str) else self.model.model_id,
        }
        if system:
            config["system"] = system
        if settings is not None:
            config["settings"] = settings.model_dump(exclude_none=True)
        if base_url:
            config["base_url"] = base_url
        self._spec = TargetSpec(kind="model", label=f"prompt → {config['model']}", config=config)

    @property
    def spec(self) -> TargetSpec:
        return self._spec

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its templates' sources: a compiled Jinja template pickles but
        cannot be loaded again, and a Ray worker needs the target whole."""
        return {k: v for k, v in self.__dict__.items() if k not in ("template", "system_template")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        prompt, system = self._sources
        self.template = _env().from_string(prompt)
        self.system_template = _env().from_string(system) if system else None

    def render(self, item: Item) -> list[ChatMessage]:
        """The messages sent for ``item``."""
        fields: dict[str, Any] = {}
        if isinstance(item.input, dict):
            fields.update(item.input)
        fields.update(
            input=item.input,
            expected_output=item.expected_output,
            context=item.context,
            metadata=item.metadata,
            id=item.id,
        )
        messages = []
        if self.system_template is not None:
            messages.append(ChatMessage(role="system", content=self.system_template.render(fields)))
        messages.append(ChatMessage(role="user", content=self.template.render(fields)))
        return messages

    async def execute(self, item: Item) -> TargetOutput:
        import jinja2  # imported already: the templates were made with it

        try:
            messages = self.render(item)
        except jinja2.UndefinedError as exc:
            raise ValueError(f"prompt template: {exc.message}") from exc
        response = await self.model.generate(messages, settings=self.settings)
        warnings = (
            ("smoke-test model: output is plumbing, not quality",) if response.smoke_test else ()
        )
        if self.constant_warning is not None:
            warnings = (*warnings, self.constant_warning)
        return TargetOutput(
            response.text,
            warnings,
            usage=response.usage,
            cost_usd=response.cost_usd,
            samples=list(response.samples) if len(response.samples) > 1 else None,
        )
