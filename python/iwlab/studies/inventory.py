"""The claims inventory (`inventory.toml`): every checkable claim of the founding documents, with
the ledger claim that checks it, or why none can (`out_of_scope`), or what checking it needs
(`pending`). It is written from the documents, so the ledgers can be held against it."""

from __future__ import annotations

import html
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

#: The document each study reproduces (a study's `StudyResult.study` → inventory `source`).
STUDY_SOURCE = {"rfc2415": "RFC 2415", "congested-links": "Nathan & Rai", "rfc6928": "RFC 6928",
                "iw-function": "draft-you", "quic-iw": "RFC 9000 / RFC 9002"}
STATUSES = ("ledger", "out_of_scope", "pending")


@dataclass(frozen=True)
class Entry:
    source: str
    at: str
    says: str
    status: str
    #: The ledger claim id (status "ledger"), or the reason (the other two).
    detail: str


@cache
def load(path: Path | None = None) -> tuple[Entry, ...]:
    """The inventory's entries in file order; a malformed entry raises ValueError naming it."""
    path = path or Path(__file__).with_name("inventory.toml")
    out = []
    for i, c in enumerate(tomllib.loads(path.read_text())["claim"]):
        given = [k for k in STATUSES if k in c]
        if len(given) != 1 or not str(c[given[0]]).strip() or not c.get("says") or not c.get("source"):
            raise ValueError(f"{path.name}: claim[{i}] ({c.get('source')}, {c.get('at')}) needs source, says and "
                             f"exactly one non-empty {' / '.join(STATUSES)}; it has {given or 'none'}")
        out.append(Entry(c["source"], c.get("at", ""), c["says"], given[0], str(c[given[0]])))
    return tuple(out)


def not_checked(study: str) -> list[Entry]:
    """The claims of `study`'s document that no ledger claim checks."""
    src = STUDY_SOURCE.get(study)
    return [e for e in load() if e.source == src and e.status != "ledger"]


def not_checked_html(study: str) -> str:
    rows = not_checked(study)
    if not rows:
        return ""
    e = html.escape
    body = "".join(f"<tr><td>{e(x.at)}</td><td>{e(x.says)}</td><td>{e(x.status.replace('_', ' '))}</td>"
                   f"<td class=note>{e(x.detail)}</td></tr>" for x in rows)
    return ("<h2 id=not-checked>Claims of the original not checked here</h2><p>Every checkable claim of the document "
            "is either in the ledger above or listed here with the reason (python/iwlab/studies/inventory.toml)."
            "</p><table class=ledger><thead><tr><th>where</th><th>claim (our words)</th><th>status</th><th>why</th>"
            f"</tr></thead><tbody>{body}</tbody></table>")
