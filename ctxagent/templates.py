"""The one prompt loader: Jinja2 templates in the `prompts/` folder of the package that owns them.

A package's prompt `<name>` is the file `<package>/prompts/<name>.md`, read through
importlib.resources (so it works from a wheel or a zip). Undefined variables fail loudly
(StrictUndefined); rendered text is stripped. No module reads another package's folder by path.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import jinja2

SUFFIX = ".md"


class _PackageLoader(jinja2.BaseLoader):
    """Jinja loader for `<package>/prompts/<file>` through importlib.resources."""

    def __init__(self, package: str) -> None:
        self.package = package

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, None, Any]:
        try:
            text = resources.files(self.package).joinpath("prompts", template).read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            where = f"{self.package.replace('.', '/')}/prompts/{template}"
            raise jinja2.TemplateNotFound(f"{where} (no such prompt file in the installed package)") from None
        return text, None, lambda: True


class Prompts:
    """The prompt files of one package, e.g. `Prompts("ctxagent.context.compaction")`.

    `trim_blocks`: Jinja's option of that name (a block tag eats its newline). Raises
    jinja2.TemplateNotFound for a missing file, jinja2.UndefinedError for a missing variable.
    """

    def __init__(self, package: str, *, trim_blocks: bool = False) -> None:
        self.package = package
        self.env = jinja2.Environment(
            loader=_PackageLoader(package),
            undefined=jinja2.StrictUndefined,
            trim_blocks=trim_blocks,
            keep_trailing_newline=False,
            autoescape=False,
        )

    def template(self, name: str) -> jinja2.Template:
        """The compiled template `<name>.md` (cached by Jinja)."""
        return self.env.get_template(name + SUFFIX)

    def render(self, name: str, /, **variables: Any) -> str:
        """Prompt `<name>.md` rendered with `variables`, stripped of surrounding whitespace."""
        return self.template(name).render(**variables).strip()

    def macro(self, name: str, macro: str, /, **variables: Any) -> str:
        """Macro `macro` of prompt `<name>.md` called with `variables` (its text, unstripped).
        Raises AttributeError if the file defines no such macro."""
        return str(getattr(self.template(name).make_module(), macro)(**variables))


@cache
def prompts(package: str, *, trim_blocks: bool = False) -> Prompts:
    """The (cached) loader of `package`'s prompt files."""
    return Prompts(package, trim_blocks=trim_blocks)


def render(package: str, name: str, /, **variables: Any) -> str:
    """Prompt `<package>/prompts/<name>.md` rendered and stripped, e.g.
    `render("ctxagent.context.compaction", "compaction", max_tokens=800, ...)`."""
    return prompts(package).render(name, **variables)
