"""The stored ledgers (`data/claims/MODE/STUDY.csv`, the `claims.csv` of a run of record) judged
by today's rules, and the figures the documents take from them: the verdict counts per study and
mode (docs/studies.md) and the verdicts today's rules moved (docs/claims.md).

    python -m iwlab.studies.stored            # prints both blocks
    python -m iwlab.studies.stored --write    # writes them between their markers in docs/
"""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

import pandas as pd

from iwlab.studies import STUDIES
from iwlab.studies.claims import VERDICTS, Judged, counts, rejudge

ROOT = Path(__file__).resolve().parents[3]
STORED = ROOT / "data" / "claims"
MODES = ("full", "quick")
#: Document → (marker, the function that writes the block).
BLOCKS = {"docs/studies.md": "verdict-counts", "docs/claims.md": "moved"}


def frame(mode: str, study: str) -> pd.DataFrame | None:
    path = STORED / mode / f"{study}.csv"
    return pd.read_csv(path) if path.is_file() else None


def judged(mode: str, study: str) -> list[Judged] | None:
    """The stored ledger of `study` in `mode`, judged by today's rules (None: not stored)."""
    df = frame(mode, study)
    if df is None:
        return None
    return rejudge(importlib.import_module(STUDIES[study]).ledger(), df)


def stored_verdicts(mode: str, study: str) -> dict[str, str]:
    """Claim id → the verdict written into the stored file when it was run."""
    df = frame(mode, study)
    return {} if df is None else dict(df.groupby("claim_id", sort=False)["claim_verdict"].first())


def counts_markdown() -> str:
    heads = ["study", "mode", "seeds", "claims", *VERDICTS]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for study in STUDIES:
        for mode in MODES:
            j = judged(mode, study)
            if j is None:
                continue
            n = counts(j)
            seeds = int(frame(mode, study)["seeds"].max())
            lines.append("| " + " | ".join([f"`{study}`", mode, str(seeds), str(len(j)), *(str(n[v]) for v in VERDICTS)])
                         + " |")
    return "\n".join(lines)


def moved_markdown(mode: str = "full") -> str:
    rows = []
    for study in STUDIES:
        j = judged(mode, study)
        if j is None:
            continue
        before = stored_verdicts(mode, study)
        for x in j:
            if before.get(x.claim.id, x.verdict) != x.verdict:
                why = x.detail if len(x.detail) <= 160 else x.detail[:159] + "…"
                rows.append(f"| `{study}` | {x.claim.id} | {before[x.claim.id]} | **{x.verdict}** | {why} |")
    if not rows:
        return "No verdict moved."
    return "\n".join(["| study | claim | before | now | why (today's rule) |", "|---|---|---|---|---|", *rows]
                     + ["", f"{len(rows)} of the stored claims moved."])


def block(name: str) -> str:
    return counts_markdown() if name == "verdict-counts" else moved_markdown()


def rewrite(text: str, name: str, body: str) -> str:
    """`text` with the lines between `<!-- NAME:start -->` and `<!-- NAME:end -->` replaced by `body`."""
    pat = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pat.search(text):
        raise ValueError(f"no <!-- {name}:start --> … <!-- {name}:end --> block")
    return pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m iwlab.studies.stored", description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the blocks into docs/")
    args = ap.parse_args(argv)
    for doc, name in BLOCKS.items():
        body = block(name)
        if args.write:
            path = ROOT / doc
            path.write_text(rewrite(path.read_text(), name, body))
            print(f"{doc}: {name} written")
        else:
            print(f"## {doc} ({name})\n{body}\n")


if __name__ == "__main__":
    main()
