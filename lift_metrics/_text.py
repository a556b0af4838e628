r"""Untrusted text made valid Unicode, by one rule for every place that reads it.

A Python ``str`` can hold surrogate code points (U+D800 to U+DFFF) on their own: JSON's
``"\ud800"`` escape gives one, and so does a model's output cut between the two halves of a
pair. No UTF-8 encoder takes them, so tokenizers, subprocesses and UTF-8 files refuse such
text with an exception. The metrics read candidate text through :func:`clean_text` at their
entry points; readers of input files that must keep the text as it is find a lone surrogate
with :func:`lone_surrogate` and reject the line instead.
"""

from __future__ import annotations

import unicodedata


def lone_surrogate(text: str) -> int | None:
    r"""Return the position of the first surrogate code point in ``text``, or None.

    Examples
    --------
    >>> lone_surrogate("ok"), lone_surrogate("a\ud800")
    (None, 1)
    """
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def clean_text(text: str) -> str:
    r"""Return ``text`` with every lone surrogate replaced by U+FFFD, the replacement character.

    A pair written as two code points is joined into the character it encodes, as a UTF-16
    decoder reads it; any other surrogate becomes U+FFFD, as bytes that are not UTF-8 do when
    decoded with ``errors="replace"``. Text without surrogates comes back unchanged (the same
    object), at the cost of one check.

    Examples
    --------
    >>> clean_text("a\ud800b")
    'a\ufffdb'
    >>> clean_text("\ud83d\ude00") == "\U0001f600"
    True
    >>> text = "déjà vu"
    >>> clean_text(text) is text
    True
    """
    if lone_surrogate(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def visible_text(text: str) -> str:
    r"""Return ``text`` as it reads: NFKC forms, without invisible format characters.

    Fullwidth letters and brackets become ASCII; zero-width spaces and joiners and
    bidirectional marks (Unicode category Cf) are dropped.

    Examples
    --------
    >>> visible_text("\uff3b\uff3b ##\u200b")
    '[[ ##'
    """
    return "".join(
        char for char in unicodedata.normalize("NFKC", text) if unicodedata.category(char) != "Cf"
    )
