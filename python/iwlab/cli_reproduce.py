"""`iwlab reproduce STUDY|all` (being written)."""

import typer


def register(app: typer.Typer) -> None:
    del app
