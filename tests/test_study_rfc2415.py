"""The RFC 2415 study on its tiny test configuration (`run(opts, _tiny=True)`: 2 seeds of 20 s,
webs {8, 16} × FTPs {0, 1}): tables in the RFC's layout with their intervals, CSVs, a report
that embeds its figures, conclusions in English and Japanese made of the tables' numbers."""

import base64
import re
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import iwlab
from iwlab.studies import Options, rfc2415
from iwlab.studies.base import write_result

IWS = ["IW=1", "IW=2", "IW=3", "IW=4"]
ROWS = ["8/0", "8/1", "16/0", "16/1"]
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("rfc2415")
    opts = Options(out, quick=True, jobs=1, progress=False)
    res = rfc2415.run(opts, _tiny=True)
    return res, write_result(res, out), out, opts


def _tables(res):
    return {t.name: t for t in res.tables}


def test_the_plan_of_each_mode():
    full, quick = rfc2415.plan(Options(Path("x"))), rfc2415.plan(Options(Path("x"), quick=True))
    assert (full.seeds, full.duration, full.webs, full.ftps, full.iws, full.half) == \
        (10, "360s", (8, 16, 32), (0, 1, 2, 3), (1, 2, 3, 4), (16, 32, 64))
    assert (quick.seeds, quick.duration) == (rfc2415.QUICK_SEEDS, rfc2415.QUICK_DURATION)
    assert quick.seeds < full.seeds and int(quick.duration[:-1]) < int(full.duration[:-1])
    assert rfc2415.plan(Options(Path("x"), quick=True, seeds=5)).seeds == 5
    tiny = rfc2415.plan(Options(Path("x")), tiny=True)
    assert (tiny.seeds, tiny.duration, tiny.webs, tiny.ftps) == (2, "20s", (8, 16), (0, 1))


def test_the_tables_have_the_rfc_layout(study):
    res = study[0]
    t = _tables(res)
    assert list(t) == ["T1", "T2", "T3", "T4", "T5", "T6", "RED"]
    delay_cols = ["IW=1 (s)", "IW=2 (% decrease)", "IW=3 (% decrease)", "IW=4 (% decrease)"]
    for name in ("T1", "T4"):
        assert list(t[name].frame.index) == ROWS and list(t[name].frame.columns) == delay_cols
    assert list(t["T2"].frame.index) == ROWS
    assert list(t["T2"].frame.columns) == [f"util {c} (%)" for c in IWS] + [f"drops {c} (%)" for c in IWS]
    for name in ("T3", "T5"):  # FTP power: only the scenarios with FTP clients
        assert list(t[name].frame.index) == ["8/1", "16/1"] and list(t[name].frame.columns) == IWS
    assert list(t["T6"].frame.index) == ["16", "8/8"]
    assert list(t["T6"].frame.columns) == [
        "IW=1 goodput (MB)", "IW=1 delay (s)", "IW=3 goodput (MB)", "IW=3 delay (s)",
        "IW=1 util (%)", "IW=1 drops (%)", "IW=3 util (%)", "IW=3 drops (%)"]
    assert list(t["RED"].frame.index) == [f"{q}, {c}" for q in ("drop-tail", "RED") for c in IWS]
    assert t["RED"].frame.shape == (8, 5)
    for table in t.values():
        assert table.low.shape == table.frame.shape == table.high.shape
    # Only the link columns of the split row are empty (the RFC's layout); everything else is measured.
    assert t["T6"].frame.isna().sum().sum() == 2
    assert t["T6"].frame.loc["8/8", ["IW=3 util (%)", "IW=3 drops (%)"]].isna().all()
    for name in ("T1", "T2", "T4", "RED"):
        assert not t[name].frame.isna().any().any(), name


def test_cells_are_within_range_and_inside_their_intervals(study):
    t = _tables(study[0])
    for table in t.values():
        v, lo, hi = table.frame.to_numpy(float), table.low.to_numpy(float), table.high.to_numpy(float)
        ok = ~np.isnan(v)
        assert np.all(lo[ok] <= v[ok] + 1e-9) and np.all(v[ok] <= hi[ok] + 1e-9), table.name
    util = pd.concat([t[n].frame.filter(like="util").stack().dropna() for n in ("T2", "T6", "RED")])
    drops = pd.concat([t[n].frame.filter(like="drops").stack().dropna() for n in ("T2", "T6", "RED")])
    assert len(util) and util.between(0, 100).all()
    assert len(drops) and (drops >= 0).all()
    assert t["T1"].frame["IW=1 (s)"].gt(0).all()
    assert (t["T3"].frame.stack().dropna() > 0).all() and (t["T6"].frame.filter(like="goodput").stack() > 0).all()


def test_the_iw1_column_is_the_baseline_and_decreases_are_paired(study):
    res, _, out, _ = study
    t = _tables(res)
    runs = iwlab.sweep_records(out / "raw" / "grid-ftp0", "runs")
    runs = runs[(runs["apps[0].http"] == "1.0") & (runs["apps[0].count"] == 8)]
    by_iw = {k: runs[runs["iw.default"] == f"iw{k}"].set_index("seed")["median_page_delay"].sort_index()
             for k in (1, 2, 3, 4)}
    assert len(by_iw[1]) == 2  # two seeds
    assert t["T1"].frame.loc["8/0", "IW=1 (s)"] == pytest.approx(by_iw[1].mean())
    for k in (2, 3, 4):
        paired = (100 * (1 - by_iw[k] / by_iw[1])).mean()
        assert t["T1"].frame.loc["8/0", f"IW={k} (% decrease)"] == pytest.approx(paired)
    # The RED table's drop-tail rows are the grid's 16/1 runs again (same scenario, same seeds).
    red = t["RED"].frame
    assert red.loc["drop-tail, IW=1", "% decrease vs drop-tail IW=1"] == 0
    assert red.loc["drop-tail, IW=1", "median page delay (s)"] == pytest.approx(t["T1"].frame.loc["16/1", "IW=1 (s)"])
    for k in (2, 3, 4):
        assert red.loc[f"drop-tail, IW={k}", "% decrease vs drop-tail IW=1"] == \
            pytest.approx(t["T1"].frame.loc["16/1", f"IW={k} (% decrease)"])
        assert red.loc[f"drop-tail, IW={k}", "util (%)"] == pytest.approx(t["T2"].frame.loc["16/1", f"util IW={k} (%)"])


def test_the_half_and_half_groups_split_the_population(study):
    _, _, out, opts = study
    base = iwlab.load("rfc2415")
    p = rfc2415.plan(opts, tiny=True)
    g = rfc2415._half_runs(rfc2415._Runner(opts, p), base, "reverse", 16)  # resumed from disk
    assert set(zip(g["ga"], g["gb"])) == {(1, 1), (1, 3), (3, 1), (3, 3)}
    wide = g.pivot_table(index=["ga", "gb", "seed"], columns="who", values="goodput")
    assert np.allclose(wide["A"] + wide["B"], wide["all"]) and (wide[["A", "B"]] > 0).all().all()
    # The split row averages both assignments: its IW=1 goodput is the mean of group A of (1, 3)
    # and group B of (3, 1), seed by seed.
    per_seed = (wide.loc[(1, 3), "A"] + wide.loc[(3, 1), "B"]) / 2
    t6 = _tables(study[0])["T6"].frame
    assert t6.loc["8/8", "IW=1 goodput (MB)"] == pytest.approx(per_seed.mean())
    assert t6.loc["16", "IW=1 goodput (MB)"] == pytest.approx(wide.loc[(1, 1), "all"].mean())


def test_the_csvs_hold_each_table_with_its_interval_columns(study):
    res, _, out, _ = study
    for t in res.tables:
        path = out / "tables" / f"{t.name}.csv"
        df = pd.read_csv(path, index_col=0)
        assert list(df.index.astype(str)) == [str(r) for r in t.frame.index]
        for c in t.frame.columns:
            assert {c, f"{c}_lo", f"{c}_hi"} <= set(df.columns), (t.name, c)
        assert len(df.columns) == 3 * len(t.frame.columns)
    assert sorted(p.name for p in (out / "tables").glob("*.csv")) == \
        sorted(f"{n}{long}.csv" for n in ("T1", "T2", "T3", "T4", "T5", "T6", "RED") for long in ("", "_long"))


def test_the_report_embeds_the_figures_and_documents_the_model(study):
    res, path, _, _ = study
    text = path.read_text()
    assert path.name == "report.html"
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)
    assert len(images) == len(res.figures) == 4
    for data in images:
        img = Image.open(BytesIO(base64.b64decode(data, validate=True)))
        assert img.format == "PNG" and img.width > 300 and img.height > 200
    assert {f.name for f in res.figures} == {"web_power", "web_power_normalised", "ftp_power",
                                             "ftp_power_normalised"}
    for name in ("T1", "T2", "T3", "T4", "T5", "T6", "RED"):
        assert f"id='{name}'" in text
    notes = " ".join(res.notes)
    assert "Pareto type I, shape 1.2, scale 1122.46 B (median 2000 B" in notes
    assert "uniform in [1, 5] s" in notes and "uniform in [0, 5] s" in notes
    for default in ("initial RTO 3s", "min RTO 200ms", "max RTO 60s", "granularity 10ms", "MSS 1460B",
                    "maximum window 11seg", "1.5Mbps", "50ms", "25pkt", "1ms", "Request 250B", "1MB",
                    "client node i mod 4"):
        assert default in notes, default
    assert "TINY" in notes and res.setup["mode"] == "tiny"
    assert "結果の要約" in text


def _numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


def test_conclusions_in_english_and_japanese_are_made_of_table_numbers(study):
    res = study[0]
    assert 3 <= len(res.conclusions) <= 6 and len(res.conclusions_ja) == len(res.conclusions)
    in_tables = set(_numbers("\n".join(t.text() for t in res.tables)))
    for en, ja in zip(res.conclusions, res.conclusions_ja):
        nums = _numbers(en)
        assert any("." in n for n in nums), en  # measured values, not only labels
        assert set(nums) <= in_tables, (en, set(nums) - in_tables)
        assert set(_numbers(ja)) == set(nums), (en, ja)
        assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", ja) and not re.search(r"[\u3040-\u30ff]", en)
    # The first sentence quotes T1's IW=4 decrease at the first scenario.
    t1 = _tables(res)["T1"]
    assert "{:.3g}".format(t1.frame.loc["8/0", "IW=4 (% decrease)"]) in res.conclusions[0]


def test_a_second_run_resumes_from_the_raw_runs(study):
    res, _, out, opts = study
    stored = sorted(p.name for p in (out / "raw").glob("*/runs/*"))
    again = rfc2415.run(opts, _tiny=True)
    assert sorted(p.name for p in (out / "raw").glob("*/runs/*")) == stored
    for a, b in zip(res.tables, again.tables):
        pd.testing.assert_frame_equal(a.frame, b.frame)
    assert again.conclusions == res.conclusions


def test_the_claims_ledger_is_judged_on_the_run_with_a_japanese_summary(study):
    """Verdicts computed from this run, claims.csv, the ledger first in the report, the
    Japanese summary of the verdicts, tidy T1 with webs/ftps/iw keys."""
    from studies_common import check_claims

    res, report, out, _ = study
    check_claims(res, out, report)
    by_id = {j.claim.id: j for j in res.claims}
    # The tiny grid has webs {8, 16}: the 32-web cells are not testable, the others are judged.
    t1 = by_id["T1-decrease"]
    assert {r.verdict for r in t1.rows if r.check.condition.startswith("webs=32")} == {"not testable"}
    assert all(r.verdict != "not testable" for r in t1.rows if r.check.condition.startswith("webs=8, ftps=0"))
    df = pd.read_csv(out / "claims.csv")
    assert len(df[df["claim_id"].str.startswith("T1-")]) == 48
    assert res.claims_ja and res.claims_ja[0].startswith("RFC 2415 の主張の検証結果")
    html = report.read_text()
    assert html.index("id=claims") < html.index("<h2>Tables</h2>") and "検証結果の要約" in html
    long = pd.read_csv(out / "tables" / "T1_long.csv")
    assert {"webs", "ftps", "iw", "metric"} <= set(long.columns)
    assert set(long["metric"]) == {"median_page_delay_s", "delay_decrease_pct"}
