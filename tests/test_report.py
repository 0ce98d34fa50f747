"""Reports: self-contained HTML with the expected figures, from a sweep directory and from a run
directory; a headless Chromium renders them."""

import base64
import re
import shutil
import subprocess
import sys
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import iwlab
from iwlab.report import build_report
from iwlab.sweep import with_overrides

IWLAB = str(Path(sys.executable).parent / "iwlab")
SWEEP_FIGURES = ("delay and network power vs IW", "utilisation and drop rate vs IW", "flow completion time CDFs",
                 "queue length over time")
IMG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)">')


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    base = with_overrides(iwlab.load("rfc2415"), {"duration": "30s", "sample_interval": "100ms"})
    iwlab.sweep(base, grid={"iw.default": ["iw1", "iw2", "iw4"], "apps[0].count": [8, 16]}, seeds=2, jobs=2,
                out=out, progress=False)
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    iwlab.run(with_overrides(iwlab.load("rfc2415"), {"duration": "30s"}), seed=3).save(out)
    return out


def _images(text: str) -> dict[str, Image.Image]:
    """alt text -> decoded PNG of every <img> of the page (each must be a valid, non-empty PNG)."""
    images = {}
    for data, alt in IMG.findall(text):
        raw = base64.b64decode(data, validate=True)
        Image.open(BytesIO(raw)).verify()
        img = Image.open(BytesIO(raw))
        assert img.format == "PNG" and img.width > 100 and img.height > 100
        images[alt] = img
    assert text.count("<img") == len(images)
    return images


def _self_contained(text: str) -> None:
    assert "http://" not in text and "https://" not in text and "<script" not in text
    assert not re.search(r'(src|href)="(?!data:)', text)


def test_a_sweep_report_holds_its_figures_tables_scenario_and_versions(sweep_dir, tmp_path):
    path = build_report(sweep_dir, tmp_path / "report.html")
    text = path.read_text()
    _self_contained(text)
    assert set(_images(text)) == set(SWEEP_FIGURES)
    assert "Summary across seeds" in text and "normalised network power" in text and "[" in text
    assert 'name = "rfc2415"' in text and 'sample_interval = "100ms"' in text  # the scenario TOML
    assert f"<td>data: iwlab</td><td>{iwlab.__version__}</td>" in text
    assert "12 runs" in text and "iw.default = iw1, iw2, iw4" in text


def test_a_run_report_via_the_cli(run_dir, tmp_path):
    out = tmp_path / "run.html"
    r = subprocess.run([IWLAB, "report", str(run_dir), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    _self_contained(text)
    assert set(_images(text)) == {"completion time CDFs"}
    assert "median_page_delay" in text and "router-right" in text and "rfc2415" in text
    # no sample_interval in that scenario: the queue figure is skipped with a note
    assert "skipped — the scenario sets no sample_interval" in text


def test_the_report_command_refuses_a_directory_without_results(tmp_path):
    r = subprocess.run([IWLAB, "report", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "neither a sweep directory" in r.stderr


def _chromium() -> str:
    exe = shutil.which("chromium")
    if exe is None:
        pytest.skip("chromium is not installed and could not be: `make test` installs it "
                    "(apt-get install chromium); without it the browser check cannot run")
    return exe


def _screenshot(page: Path, shot: Path, tmp_path: Path, width: int, height: int) -> np.ndarray:
    """Headless Chromium's screenshot of `page`, `width`×`height`, as an (height, width, 3) array."""
    r = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                        f"--window-size={width},{height}", page.as_uri()], capture_output=True, text=True, timeout=150)
    assert r.returncode == 0 and shot.exists(), r.stderr[-2000:]
    return np.asarray(Image.open(shot).convert("RGB")).reshape(height, width, 3).astype(int)


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_chromium_renders_the_sweep_report(sweep_dir, tmp_path):
    page = build_report(sweep_dir, tmp_path / "report.html")
    px = _screenshot(page, tmp_path / "shot.png", tmp_path, 1280, 2000).reshape(-1, 3)
    assert len(px) == 1280 * 2000
    colours = np.unique(px @ np.array([1 << 16, 1 << 8, 1]))
    assert len(colours) > 500  # text, lines, markers, anti-aliasing: not a blank page
    assert (px.sum(axis=1) < 600).mean() > 0.01  # > 1 % of the page is drawn in clearly non-white ink
    # the first figure (delay and power vs IW) is in the top 2000 px, drawn in matplotlib's blue and orange
    for rgb in ((31, 119, 180), (255, 127, 14)):
        assert (np.abs(px - rgb) < 25).all(axis=1).sum() > 500, f"no {rgb} lines in the screenshot"


def test_reports_of_an_ungridded_and_of_an_unfinished_sweep(tmp_path):
    base = with_overrides(iwlab.load("rfc2415"), {"duration": "20s"})
    iwlab.sweep(base, seeds=2, jobs=1, out=tmp_path / "seeds", progress=False)
    assert "Sweep of rfc2415: 2 runs" in build_report(tmp_path / "seeds").read_text()
    df = iwlab.sweep(base, grid={"iw.default": ["iw1", "iw2"]}, seeds=1, jobs=1, out=tmp_path / "part",
                     progress=False)
    shutil.rmtree(tmp_path / "part" / "runs" / df["run_id"][0])  # the baseline run is not on disk yet
    text = build_report(tmp_path / "part").read_text()
    assert "Incomplete sweep: 1 of 2 runs are on disk." in text
    assert set(_images(text)) == set(SWEEP_FIGURES) - {"queue length over time"}  # no sample_interval


def _ledger_result():
    """RFC 2415's ledger judged on a synthetic Table 1 (every decrease 20 % [19, 21], IW=1 delay 1 s):
    a few claims decided, the rest not testable — enough rows and badges to fill a first screen."""
    from iwlab.studies import claims as cl
    from iwlab.studies import rfc2415
    from iwlab.studies.base import Cell, StudyResult, Table

    rows = [f"{w}/{f}" for w, f in rfc2415.RFC_ROWS]
    cols = ["IW=1 (s)"] + [f"IW={k} (% decrease)" for k in (2, 3, 4)]
    cells = {r: {c: (Cell(1.0, 0.9, 1.1, 5) if c == "IW=1 (s)" else Cell(20.0, 19.0, 21.0, 5)) for c in cols}
             for r in rows}
    t1 = Table.from_cells("T1", "T1", cells)
    judged = cl.judge(rfc2415.ledger(), cl.Evidence({"T1": t1}, seeds=5))
    return StudyResult("rfc2415", "RFC 2415", tables=[t1], claims=judged, errata=rfc2415.errata())


def test_the_study_report_opens_on_a_ledger_table_with_badges_and_folded_detail(tmp_path):
    from iwlab.studies.base import write_result

    res = _ledger_result()
    text = write_result(res, tmp_path).read_text()
    _self_contained(text)
    ledger = text[text.index("<table class=ledger>"):]
    assert text.index("id=claims") < text.index("id=errata") < text.index("<h2>Tables</h2>")
    assert ledger.count("<tr id='claim-") == len(res.claims)
    assert ledger.count("class='badge") >= len(res.claims)  # one badge per claim row
    assert ledger.count("<details>") >= len(res.claims)  # the per-condition detail is folded
    assert "Table 2" in text[text.index("id=errata"):] and "16/0" in text[text.index("id=errata"):]


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_chromium_shows_the_ledger_table_on_the_first_screen(tmp_path):
    from iwlab.studies.base import write_result
    from iwlab.studies.claims import _BADGE

    page = write_result(_ledger_result(), tmp_path / "study")
    px = _screenshot(page, tmp_path / "ledger.png", tmp_path, 1280, 800)

    def badge_pixels(verdict: str) -> int:
        rgb = tuple(int(_BADGE[verdict][0][i:i + 2], 16) for i in (1, 3, 5))
        return int((np.abs(px - rgb) < 12).all(axis=2).sum())

    # The first screen (1280 × 800) already shows claim rows: coloured badges, one per row.
    shown = {v: badge_pixels(v) for v in ("reproduced", "partly", "not testable")}
    assert shown["not testable"] > 300 and shown["reproduced"] + shown["partly"] > 100, shown
    # The table's grid lines (#ccc) run through the first screen: a table, not paragraphs.
    grid_rows = ((np.abs(px - 204) < 3).all(axis=2).sum(axis=1) > 600).sum()
    assert grid_rows >= 5, grid_rows
