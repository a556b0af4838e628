"""Read code as users hand it over: Markdown fences and surrounding prose removed.

Stand-in with the final interface; the full version (prose around code, several fences,
body-only completions) replaces it.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


def extract_code(text: str) -> str:
    """The Python code in ``text``: the first fenced block when there is one, else the text.

    Examples
    --------
    >>> extract_code("Here:\\n```python\\nx = 1\\n```\\nDone.")
    'x = 1\\n'
    >>> extract_code("x = 1\\n")
    'x = 1\\n'
    """
    match = _FENCE.search(text)
    return match.group(1) if match else text
