"""`iwlab lab up|down|status`: the namespaces `web` and `client` the documents' root examples
use (python/iwlab/lab.py)."""

from __future__ import annotations

import typer

from iwlab.cli.common import HelpGroup

H_NAME = "prefix of the namespaces: NAME-web and NAME-client (default: web and client)"

lab = typer.Typer(name="lab", no_args_is_help=True, cls=HelpGroup, rich_markup_mode=None,
                  help="The documents' example hosts: namespaces `web` (HTTP server, 10.0.1.1) and `client` (root).")


def _call(fn, *args):
    from iwlab.cli.common import fail
    from iwlab.lab import LabError

    try:
        return fn(*args)
    except LabError as e:
        fail(str(e), 2 if e.usage else 1)


@lab.command("up")
def up_cmd(name: str = typer.Option("", "--name", help=H_NAME),
           quic: bool = typer.Option(False, "--quic", help="also an HTTP/3 server on web's UDP 443 (aioquic, "
                                     "IW 12000 B) for `iwlab probe --quic`")) -> None:
    """Make the namespaces, their veth pair and addresses, and the HTTP server serving big.bin
    (nothing is done when the lab is up already)."""
    from iwlab import lab as labmod

    st, made = _call(labmod.up, name, quic)
    typer.echo(("lab up\n" if made else "lab already up\n") + labmod.describe(st))


@lab.command("down")
def down_cmd(name: str = typer.Option("", "--name", help=H_NAME)) -> None:
    """Remove what `iwlab lab up` made: its namespaces and whatever runs in them."""
    from iwlab import lab as labmod

    removed = _call(labmod.down, name)
    typer.echo(f"lab down: removed {', '.join(removed)}" if removed else "lab down: nothing of it was up")


@lab.command("status")
def status_cmd(name: str = typer.Option("", "--name", help=H_NAME)) -> None:
    """Exit 0 and describe the lab when it is up; exit 1 otherwise."""
    from iwlab import lab as labmod

    _call(labmod.check_name, name)
    st = labmod.load(name)
    if not labmod.is_up(st):
        typer.echo("lab down")
        raise typer.Exit(1)
    typer.echo("lab up\n" + labmod.describe(st))


def register(app: typer.Typer) -> None:
    app.add_typer(lab)
