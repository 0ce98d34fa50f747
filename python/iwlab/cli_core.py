"""`iwlab run | presets | show | validate | trace` (being written)."""

import typer


def register(app: typer.Typer) -> None:
    del app
