"""A Sphinx extension for the book (`_config.yml`: sphinx.extra_extensions): each script of a page once.

Jupyter Book 1 registers sphinx-thebe's configuration script twice in this build, so every page declared
`const THEBE_JS_URL` twice and logged a SyntaxError in the browser console. This drops repeated scripts (same
file, same inline body) from each page's script list; nothing else changes.
"""

from __future__ import annotations

from typing import Any


def unique_scripts(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        # an inline script is registered with filename None by one extension and '' by another: the same script
        key = (str(getattr(js, "filename", js) or ""), repr(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            kept.append(js)
    context["script_files"] = kept


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
