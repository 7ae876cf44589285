"""Where the repository's folders are, from one root: the notebooks, the shipped results, the book's executed
pages and the build folder."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
RESULTS = REPO / "results"
BOOK_CLAIMS = REPO / "book" / "claims"
BUILD = REPO / "_build"
