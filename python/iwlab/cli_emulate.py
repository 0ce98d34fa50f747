"""`iwlab emulate | compare` (being written)."""

import typer


def register(app: typer.Typer) -> None:
    del app
