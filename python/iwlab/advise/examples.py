"""The worked examples of docs/advise.md: each is one `iwlab advise` command whose output is
stored in docs/examples/advise-NAME.txt (the command on the first line, `$ iwlab advise …`).

    python -m iwlab.advise.examples docs/examples      # runs them again and rewrites the files

Runs are counted in the budget (`--budget 60runs`), not timed, so the same command gives the
same output on any machine, except the line saying how long the runs took (`WALL` masks it).
`tests/test_advise_examples.py` re-runs them and checks the documentation against the files.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

__all__ = ["EXAMPLES", "WALL", "run", "masked", "shown"]

#: name -> the arguments after `iwlab advise`.
EXAMPLES: dict[str, list[str]] = {
    # A long lossless path: IW 32 sends a 30-segment response in one round trip, whatever the load
    # or the way the flows arrive.
    "robust": ["--rate", "10Mbps", "--rtt", "300ms", "--buffer", "500pkt", "--sizes", "30seg",
               "--candidates", "fixed:3,10,32", "--duration", "20s", "--budget", "60runs", "--jobs", "2",
               "--no-progress"],
    # 9-segment responses beside UDP at half the link, a 20-packet buffer: one flow's 9 segments
    # fit, four flows fetched at once (a page's objects) do not.
    "arrivals": ["--rate", "2Mbps", "--rtt", "100ms", "--buffer", "20pkt", "--background", "udp:50%",
                 "--sizes", "9seg", "--candidates", "fixed:3,10", "--duration", "20s", "--budget", "60runs",
                 "--jobs", "2", "--no-progress"],
}

#: The one line of the output that depends on the machine: how long the runs took.
WALL = re.compile(r"^(\d+ runs) in [0-9.]+ s ")


def run(name: str) -> str:
    """The stored text of example `name`: its command line, then what `iwlab advise` printed."""
    args = EXAMPLES[name]
    out = subprocess.run([sys.executable, "-c", "from iwlab.cli import main; main()", "advise", *args],
                         capture_output=True, text=True, check=True).stdout
    return f"$ iwlab advise {' '.join(args)}\n{out}"


def masked(text: str) -> str:
    """`text` with the wall-time figure replaced by `…`."""
    return "\n".join(WALL.sub(r"\1 in … s ", line) for line in text.splitlines())


def shown(text: str) -> str:
    """The part of a stored output the documentation shows: the command, the advice, the
    candidates and the sensitivity (up to the policy file)."""
    lines = text.splitlines()
    end = next((i for i, ln in enumerate(lines) if ln.startswith(("policy file", "limits:"))), len(lines))
    while end and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[:end])


def main(argv: list[str]) -> None:
    out = Path(argv[0] if argv else "docs/examples")
    out.mkdir(parents=True, exist_ok=True)
    for name in EXAMPLES:
        (out / f"advise-{name}.txt").write_text(run(name))
        print(f"wrote {out / f'advise-{name}.txt'}")


if __name__ == "__main__":
    main(sys.argv[1:])
