"""What every study produces, and how it is written: tables (CSV + HTML, every cell with its
spread across seeds), figures, the claims ledger and the report. The types live in `model`
(one floor down, shared by `claims` and `report`); this module re-exports them and writes results.
"""

from __future__ import annotations

import json
from pathlib import Path

from iwlab.studies.claims import claims_frame, counts, errata_frame
from iwlab.studies.model import (TINY_ENV, Cell, Figure, Options, Runner, Study, StudyResult, Table, cell,
                                 iw_col_keys, metric_name, quantity, tiny)
from iwlab.studies.report import study_html

__all__ = ["TINY_ENV", "Cell", "Figure", "Options", "Runner", "Study", "StudyResult", "Table", "cell", "iw_col_keys",
           "metric_name", "quantity", "tiny", "write_result"]


def write_result(res: StudyResult, out: Path) -> Path:
    """Writes `tables/<name>.csv`, `result.json` and `report.html` under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(exist_ok=True)
    for t in res.tables:
        t.to_csv_frame().to_csv(out / "tables" / f"{t.name}.csv")
        t.to_long().to_csv(out / "tables" / f"{t.name}_long.csv", index=False)
    if res.claims:
        claims_frame(res.study, res.claims, str(res.setup.get("mode", ""))).to_csv(out / "claims.csv", index=False)
    if res.errata:
        errata_frame(res.study, res.errata).to_csv(out / "errata.csv", index=False)
    meta = {
        "study": res.study,
        "title": res.title,
        "conclusions": res.conclusions,
        "conclusions_ja": res.conclusions_ja,
        "setup": res.setup,
        "tables": [t.name for t in res.tables],
        "figures": [f.name for f in res.figures],
    }
    if res.claims:
        meta["claims"] = {"n": len(res.claims), **counts(res.claims)}
        meta["claims_ja"] = res.claims_ja
    (out / "result.json").write_text(json.dumps(meta, indent=2, default=str, ensure_ascii=False))
    path = out / "report.html"
    path.write_text(study_html(res))
    return path
