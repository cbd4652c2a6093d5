"""Where the UI's templates and static assets live inside the installed package."""

from __future__ import annotations

from pathlib import Path

STATIC_DIR: Path = Path(__file__).parent / "static"
TEMPLATES_DIR: Path = Path(__file__).parent / "templates"
