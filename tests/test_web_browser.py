"""The browser board in a real browser: headless Chromium driven by Selenium.

Runs ``python -m engine serve --port 0`` from this source tree and drives the
page: a knightrelay mate by a relayed check, a grand promotion through the
dialog, PGN navigation, analysis with PV preview, watching a running match,
the phone layout, and the move round trip. Assertions are on the DOM; a
screenshot per scenario goes to the test's tmp dir or to ``--screenshots DIR``.
Skips when chromium/chromedriver are missing, unless CI=true.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
HEADLESS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]
KR_MATE = "5k2/8/4P2P/3K4/3b1N2/8/1q4QR/8 w - - 0 1"    # tests/data/mates_knightrelay.epd, mate by a relayed check
GRAND_PROMO = "k9/4P5/10/10/10/10/10/10/1NBQKCB1N1/9R w - - 0 1"   # White has lost a rook and the cardinal
WAIT = 60
MATCH_WAIT = 300   # two games on a loaded machine


def _need(path, package):
    if not (os.path.exists(path) or shutil.which(os.path.basename(path))):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing; .ci/run installs it with apt-get ({package})")
        pytest.skip(f"{path} not installed (apt-get install {package})")
    return path if os.path.exists(path) else shutil.which(os.path.basename(path))


webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def server():
    """``(url, seconds to first page)``: a server started from this tree on a free port."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "engine", "serve", "--port", "0", "--max-engines", "2"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    url = None
    for line in proc.stdout:
        if "browser board at " in line:
            url = line.split("browser board at ")[1].split()[0]
            break
    assert url, "cardinal serve printed no address"
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    import urllib.request
    with urllib.request.urlopen(url) as r:
        assert b"Cardinal" in r.read()
    first_page = time.monotonic() - t0
    yield url, first_page
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def driver():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    binary = _need(CHROMIUM, "chromium")
    drv = _need(CHROMEDRIVER, "chromium-driver")
    opts = Options()
    opts.binary_location = binary
    for flag in HEADLESS:
        opts.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="cardinal-chromium-")
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument("--window-size=1280,800")
    d = webdriver.Chrome(service=Service(drv), options=opts)
    yield d
    d.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def shots(request, tmp_path):
    out = request.config.getoption("--screenshots")
    d = os.path.abspath(out) if out else str(tmp_path)
    os.makedirs(d, exist_ok=True)
    return d


def viewport(d, width, height):
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def wait(d, cond, what):
    try:
        return WebDriverWait(d, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(lambda drv: cond(drv))
    except Exception as ex:
        why = f"{type(ex).__name__}: {str(ex).splitlines()[0] if str(ex).strip() else ''}"
        page = d.execute_script("const s = document.getElementById('status'), m = document.getElementById('message');"
                                "return [s.textContent, JSON.stringify(s.dataset), m.textContent]")
        server = d.execute_script("const r = new XMLHttpRequest(); r.open('GET', '/api/status', false); r.send();"
                                  "return r.responseText")
        raise AssertionError(f"waiting for {what} failed ({why}); page status, message: {page}; server: {server}") from None


def data_points(d, element_id):
    """The ``data-points`` of a plot line, read in one script call: the watch page redraws its
    plot as a whole, so an element found in one call may be stale in the next."""
    return d.execute_script("const e = document.getElementById(arguments[0]); return e ? e.dataset.points : null",
                            element_id)


def open_page(d, url, **params):
    q = "&".join(f"{k}={v}" for k, v in params.items())
    d.get(url + ("?" + q if q else ""))
    wait(d, lambda x: x.execute_script("return document.body.dataset.ready === '1'"), "the page to load")


def sq(d, name):
    return d.find_element(By.CSS_SELECTOR, f'#board .sq[data-sq="{name}"]')


def piece(d, name, board="#board"):
    return d.execute_script(
        f"const p = document.querySelector('{board} .sq[data-sq=\"{name}\"] .piece'); return p && p.dataset.piece")


def status(d):
    return d.execute_script("const s = document.getElementById('status'); "
                            "return [s.dataset.status, s.textContent]")


def test_knightrelay_mate_by_a_relayed_check(driver, server, shots):
    url, _ = server
    viewport(driver, 1280, 800)
    from urllib.parse import quote
    open_page(driver, url, variant="knightrelay", side="white", fen=quote(KR_MATE))
    assert piece(driver, "g2") == "wQ"
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")   # 1280x800
    sq(driver, "g2").click()
    # the queen, defended by the knight on f4, also leaps like a knight: those squares are styled apart
    dests = driver.execute_script("return [...document.querySelectorAll('#board .sq.dest')]"
                                  ".map(e => [e.dataset.sq, e.classList.contains('relay')])")
    assert ["g6", False] in dests
    assert sorted(s for s, r in dests if r) == ["e1", "e3", "h4"]
    sq(driver, "g6").click()
    wait(driver, lambda x: status(x)[0] == "checkmate", "mate to be announced")
    assert "Checkmate: White wins (1-0)" in status(driver)[1]
    assert piece(driver, "g6") == "wQ"
    assert driver.find_elements(By.CSS_SELECTOR, '#board .sq.check[data-sq="f8"]')   # the mated king
    assert driver.find_element(By.CSS_SELECTOR, "#movelist .mv").text == "Qg6#"
    driver.save_screenshot(os.path.join(shots, "play-knightrelay-mate.png"))


def test_grand_promotion_dialog_offers_only_captured_types(driver, server, shots):
    url, _ = server
    viewport(driver, 1280, 800)
    from urllib.parse import quote
    open_page(driver, url, variant="grand", side="both", fen=quote(GRAND_PROMO))
    sq(driver, "e9").click()
    sq(driver, "e10").click()
    wait(driver, lambda x: x.find_element(By.ID, "promo-dialog").get_attribute("open") is not None,
         "the promotion dialog")
    offered = driver.execute_script("return [...document.querySelectorAll('#promo-choices .promo-choice')]"
                                    ".map(b => b.dataset.promo)")
    assert sorted(offered) == ["a", "r"]        # queen, marshal, bishop, knight are all still on the board
    assert "q" not in offered and "" not in offered    # rank 10: promotion is forced
    driver.save_screenshot(os.path.join(shots, "play-grand-promotion.png"))
    driver.find_element(By.CSS_SELECTOR, '#promo-choices .promo-choice[data-promo="a"]').click()
    wait(driver, lambda x: piece(x, "e10") == "wA", "the cardinal on e10")
    assert driver.find_element(By.CSS_SELECTOR, "#movelist .mv").text.startswith("e10=A")


PGN = """[Event "Cardinal match"]
[Site "?"]
[Date "2026.12.01"]
[Round "1"]
[White "Cardinal"]
[Black "Cardinal"]
[Result "*"]
[Variant "grand"]

1. e5 {+0.20/6 0.1s} e6 2. Nh4 {+0.31/6 0.1s} Nh7 3. f5 exf5 *
"""


def test_pgn_load_and_navigate(driver, server, shots):
    url, _ = server
    viewport(driver, 1280, 800)
    open_page(driver, url, variant="chess", side="both")
    driver.find_element(By.CSS_SELECTOR, "#pgn-box summary").click()
    box = driver.find_element(By.ID, "pgn")
    box.clear()
    driver.execute_script("document.getElementById('pgn').value = arguments[0]", PGN)
    driver.find_element(By.ID, "btn-pgn-load").click()
    wait(driver, lambda x: len(x.find_elements(By.CSS_SELECTOR, "#movelist .mv")) == 6, "six moves listed")
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#movelist .mv")] == \
        ["e5", "e6", "Nh4", "Nh7", "f5", "exf5"]
    assert driver.find_element(By.ID, "board").get_attribute("data-files") == "10"
    assert piece(driver, "f5") == "bP" and piece(driver, "e6") is None
    driver.find_element(By.ID, "nav-first").click()
    wait(driver, lambda x: x.find_element(By.ID, "board").get_attribute("data-ply") == "0", "ply 0")
    assert piece(driver, "e3") == "wP" and piece(driver, "e5") is None
    driver.find_element(By.ID, "nav-next").click()
    driver.find_element(By.ID, "nav-next").click()
    wait(driver, lambda x: x.find_element(By.ID, "board").get_attribute("data-ply") == "2", "ply 2")
    assert piece(driver, "e5") == "wP" and piece(driver, "e6") == "bP" and piece(driver, "i2") == "wN"
    driver.find_element(By.CSS_SELECTOR, '#movelist .mv[data-ply="3"]').click()
    wait(driver, lambda x: piece(x, "h4") == "wN", "Nh4 shown")
    assert "viewing ply 3 of 6" in status(driver)[1]
    driver.find_element(By.ID, "nav-prev").click()
    wait(driver, lambda x: piece(x, "i2") == "wN", "back to ply 2")
    driver.save_screenshot(os.path.join(shots, "pgn-navigation.png"))
    driver.find_element(By.ID, "nav-last").click()
    wait(driver, lambda x: x.find_element(By.ID, "board").get_attribute("data-ply") == "6", "ply 6")


def test_analysis_lines_and_pv_preview(driver, server, shots):
    url, _ = server
    viewport(driver, 1280, 800)
    open_page(driver, url, variant="grand", side="white")
    driver.find_element(By.ID, "multipv").send_keys("3")
    driver.find_element(By.ID, "tab-analyse").click()
    wait(driver, lambda x: len(x.find_elements(By.CSS_SELECTOR, "#pv-lines .pv-line")) == 3
         and int(x.find_element(By.ID, "an-depth").text or 0) >= 4, "three analysis lines at depth 4")
    assert driver.find_element(By.ID, "btn-analyse").get_attribute("aria-pressed") == "true"
    assert driver.find_element(By.ID, "evalbar").get_attribute("data-score")
    driver.save_screenshot(os.path.join(shots, "analyse-grand.png"))
    before = driver.execute_script("return document.querySelectorAll('#board .piece').length")
    # the lines are redrawn at every info line: find and click in one script
    san = driver.execute_script(
        "const e = document.querySelector('#pv-lines .pv-line[data-multipv=\"1\"] .pv-move[data-idx=\"0\"]');"
        "e.click(); return e.textContent")
    wait(driver, lambda x: x.find_element(By.ID, "preview-note").get_attribute("hidden") is None, "the PV preview")
    moved = driver.execute_script("return [...document.querySelectorAll('#board .sq.last')].map(e => e.dataset.sq)")
    assert len(moved) == 2 and san
    assert piece(driver, moved[0]) is None or piece(driver, moved[1]) is None     # one square emptied
    assert before == driver.execute_script("return document.querySelectorAll('#board .piece').length")
    driver.find_element(By.ID, "btn-preview-exit").click()
    driver.find_element(By.ID, "btn-analyse").click()
    wait(driver, lambda x: x.find_element(By.ID, "btn-analyse").get_attribute("aria-pressed") == "false",
         "analysis to stop")


def test_watch_a_running_match(driver, server, shots, tmp_path):
    url, _ = server
    viewport(driver, 1280, 800)
    pgn = tmp_path / "match.pgn"
    open_page(driver, url)
    driver.find_element(By.ID, "tab-watch").click()
    driver.find_element(By.ID, "watch-path").send_keys(str(pgn))
    driver.find_element(By.ID, "btn-watch").click()
    wait(driver, lambda x: "waiting" in x.find_element(By.ID, "watch-players").text, "the watcher")
    match = subprocess.Popen([sys.executable, "-m", "engine", "match", "--variant", "chess", "--games", "2",
                              "--depth", "1", "--pgn", str(pgn), "--no-progress"], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seen = set()

        def progress(x):
            games, points = x.execute_script("return [document.body.dataset.watchGames, "
                                             "document.getElementById('plot-elo').dataset.points]")
            seen.add((games, points))
            return games == "2"
        WebDriverWait(driver, MATCH_WAIT, poll_frequency=0.05).until(progress, "the match to finish")
        assert match.wait(timeout=MATCH_WAIT) == 0
        # the page followed the running match: one plot point per finished game, at every step seen
        assert ("0", "0") in seen and ("2", "2") in seen and all(g == p for g, p in seen)
    finally:
        if match.poll() is None:
            match.kill()
            match.wait()
    assert data_points(driver, "plot-elo") == "2"
    w, d, l = map(int, driver.find_element(By.ID, "watch-score").text.split("-"))
    assert w + d + l == 2
    assert driver.find_element(By.ID, "watch-elo").text != "-"
    assert driver.find_elements(By.CSS_SELECTOR, "#watch-board .piece")
    # the match's results journal (match.jsonl) carries the LLR when the match runs an SPRT
    journal = tmp_path / "match.jsonl"
    assert journal.exists()
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    for ln in lines:
        if ln.get("type") == "pair":
            ln["totals"]["llr"] = 0.4
    journal.write_text("".join(json.dumps(x) + "\n" for x in lines))
    wait(driver, lambda x: data_points(x, "plot-llr") == "1", "the LLR curve")
    driver.save_screenshot(os.path.join(shots, "watch-match.png"))


BLACK_FIRST = """[Event "m"]
[Round "1"]
[White "A"]
[Black "B"]
[Result "*"]
[FEN "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 7"]
[SetUp "1"]

7... e5 8. Nf3 Nc6 *
"""


def test_move_numbers_when_black_moves_first_on_watch_and_play(driver, server, tmp_path):
    """A game that starts with Black to move is numbered ``7... e5 8. Nf3 Nc6`` on the Watch
    page and in the Play page's move list alike (one function, static/notation.js)."""
    url, _ = server
    viewport(driver, 1280, 800)
    pgn = tmp_path / "black-first.pgn"
    pgn.write_text(BLACK_FIRST)
    want = ["7...", "e5", "8.", "Nf3", "Nc6"]
    open_page(driver, url, variant="chess", side="both")
    driver.find_element(By.ID, "tab-watch").click()
    driver.find_element(By.ID, "watch-path").send_keys(str(pgn))
    driver.find_element(By.ID, "btn-watch").click()
    wait(driver, lambda x: x.find_element(By.ID, "watch-moves").text.strip(), "the watched game's moves")
    assert driver.find_element(By.ID, "watch-moves").text.split() == want
    driver.find_element(By.ID, "tab-play").click()
    driver.find_element(By.CSS_SELECTOR, "#pgn-box summary").click()
    driver.execute_script("document.getElementById('pgn').value = arguments[0]", BLACK_FIRST)
    driver.find_element(By.ID, "btn-pgn-load").click()
    wait(driver, lambda x: len(x.find_elements(By.CSS_SELECTOR, "#movelist .mv")) == 3, "three moves listed")
    assert driver.execute_script("return [...document.querySelectorAll('#movelist span')]"
                                 ".map(e => e.textContent.trim())") == want
    # the shared function itself: White first, Black first, a later move number
    got = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "import('/static/notation.js').then(m => done(["
        "  m.movesText(null, ['e4', 'e5', 'Nf3']),"
        "  m.movesText('10/10/10/10/10/10/10/10/10/10 b - - 0 1', ['d7', 'Qxj8', 'a5']),"
        "  m.movesText('8/8/8/8/8/8/8/8 w - - 3 12', ['Kd2', 'Kd7']),"
        "  m.movesText('8/8/8/8/8/8/8/8 b - - 3 12', [])]))")
    assert got == ["1. e4 e5 2. Nf3", "1... d7 2. Qxj8 a5", "12. Kd2 Kd7", ""]


def test_phone_width_has_no_horizontal_scrolling(driver, server, shots):
    url, _ = server
    viewport(driver, 390, 844)
    try:
        open_page(driver, url, variant="grand", side="white")
        dims = driver.execute_script(
            "const b = document.getElementById('board').getBoundingClientRect();"
            "return [document.documentElement.scrollWidth, window.innerWidth, b.left, b.right, b.width]")
        scroll_w, inner_w, left, right, width = dims
        assert inner_w == 390
        assert scroll_w <= inner_w, f"page is {scroll_w}px wide in a {inner_w}px viewport"
        assert 0 <= left and right <= inner_w and width > 300
        driver.save_screenshot(os.path.join(shots, "phone-390x844.png"))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


PHONE = (375, 812)


def test_phone_coordinates_do_not_cover_pieces(driver, server):
    """At phone width (grand, 10x10: squares of about 32 px) the rank and file labels sit
    outside the board: none overlaps a piece, the corner ones ("10", "1", "a", "j") included,
    also with the board flipped, and none leaves the screen."""
    url, _ = server
    viewport(driver, *PHONE)
    try:
        open_page(driver, url, variant="grand", side="both")
        for flipped in (False, True):
            if flipped:
                driver.find_element(By.ID, "btn-flip").click()
            labels, pieces, width = driver.execute_script(
                "const R = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };"
                "return [[...document.querySelectorAll('#board .coord-rank, #board .coord-file')]"
                "          .map(e => [e.textContent, e.closest('.sq').dataset.sq, R(e)]),"
                "        [...document.querySelectorAll('#board .piece')].map(e => [e.closest('.sq').dataset.sq, R(e)]),"
                "        window.innerWidth]")
            assert len(labels) == 20 and len(pieces) == 40
            for text, sq, (l1, t1, r1, b1) in labels:
                assert 0 <= l1 and r1 <= width, (text, sq, l1, r1)
                for psq, (l2, t2, r2, b2) in pieces:
                    overlap = min(r1, r2) - max(l1, l2) > 0 and min(b1, b2) - max(t1, t2) > 0
                    assert not overlap, f"label {text!r} of {sq} overlaps the piece on {psq} (flipped: {flipped})"
            assert {text for text, _, _ in labels} >= {"10", "1", "a", "j"}
            assert piece(driver, "a10") == "bR" and piece(driver, "a1") == "wR"    # corner pieces to cover
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_bad_fen_stays_in_the_box_with_its_error_at_phone_width(driver, server):
    """A FEN the server rejects stays in the box as typed, marked invalid, with the reason
    under it (the message at the top is out of sight on a phone); a good one replaces it."""
    url, _ = server
    viewport(driver, *PHONE)
    try:
        open_page(driver, url, variant="grand", side="both")
        driver.find_element(By.CSS_SELECTOR, "#fen-box summary").click()
        box = driver.find_element(By.ID, "fen")
        bad = "r8r/1nbqkcabn1/pppppppppp/10/10 w - - 0 1"
        box.clear()
        box.send_keys(bad)
        driver.find_element(By.ID, "btn-fen").click()
        wait(driver, lambda x: "board field" in x.find_element(By.ID, "message").text, "the FEN error")
        assert box.get_attribute("value") == bad
        assert box.get_attribute("aria-invalid") == "true"
        note = driver.find_element(By.ID, "fen-error")
        assert note.is_displayed() and note.text.startswith("bad FEN: board field")
        assert piece(driver, "e3") == "wP"                  # the game is kept
        good = "k9/10/10/10/10/10/10/10/10/K9 w - - 0 1"
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys(good, Keys.ENTER)
        wait(driver, lambda x: piece(x, "a1") == "wK", "the new position")
        assert box.get_attribute("value") == good
        assert box.get_attribute("aria-invalid") is None
        assert not driver.find_element(By.ID, "fen-error").is_displayed()
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


OUTLINES = """
const size = arguments[0], done = arguments[arguments.length - 1];
import('/static/pieces.js').then(async (m) => {
  const outline = (letter) => new Promise((ok, fail) => {
    const img = new Image();
    img.onload = () => {
      const c = document.createElement('canvas'); c.width = c.height = size;
      const g = c.getContext('2d'); g.drawImage(img, 0, 0, size, size);
      const px = g.getImageData(0, 0, size, size).data;
      ok(Array.from({ length: size * size }, (_, i) => px[4 * i + 3] > 127));
    };
    img.onerror = () => fail(letter);
    img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(m.pieceSVG(letter));
  });
  const out = {};
  for (const t of 'PNBRQKCAcapnbrqk') out[t] = await outline(t);
  done(out);
}).catch((e) => done(String(e)));
"""


def test_every_piece_has_its_own_outline_at_phone_size(driver, server):
    """Drawn at the size of a phone's square (32 px), every piece type's outline differs from
    every other's in at least a fifth of its pixels: the marshal and cardinal from each other,
    and from the rook and bishop they were once drawn as (with an emblem inside, the same outline)."""
    url, _ = server
    viewport(driver, 1280, 800)
    open_page(driver, url)
    masks = driver.execute_async_script(OUTLINES, 32)
    assert isinstance(masks, dict), masks
    for color in (str.upper, str.lower):
        types = [color(t) for t in "PNBRQKCA"]
        for i, a in enumerate(types):
            for b in types[i + 1:]:
                ma, mb = masks[a], masks[b]
                union = sum(x or y for x, y in zip(ma, mb))
                differ = sum(x != y for x, y in zip(ma, mb)) / union
                assert differ >= 0.2, f"{a} and {b} outlines differ in only {differ:.0%} of their pixels"


def test_move_round_trip_and_start_time(driver, server, tmp_path):
    """Click -> engine reply shown, minus the engine's own thinking time (reported, not bounded)."""
    url, first_page = server
    viewport(driver, 1280, 800)
    open_page(driver, url, variant="chess", side="white")
    driver.find_element(By.ID, "limit-kind").send_keys("fixed depth")
    depth = driver.find_element(By.ID, "depth")
    depth.clear()
    depth.send_keys("1")
    driver.find_element(By.ID, "btn-new").click()
    wait(driver, lambda x: x.execute_script("return window.cardinal.state && "
                                            "window.cardinal.state.limits.kind === 'depth'"), "a depth-1 game")
    # measure the steady state: the engine process has started and answered isready
    wait(driver, lambda x: x.find_element(By.ID, "status").get_attribute("data-engine") == "ready", "the engine")
    samples = []
    for i, (frm, to) in enumerate((("e2", "e4"), ("d2", "d3"), ("g1", "f3"), ("b1", "c3"))):
        n = len(samples)
        if piece(driver, frm) is None or not driver.execute_script(
                f"return window.cardinal.state.legal.some(m => m.from === '{frm}' && m.to === '{to}')"):
            continue
        if i == 0:      # drag and drop
            from selenium.webdriver.common.action_chains import ActionChains
            ActionChains(driver).click_and_hold(sq(driver, frm)).move_by_offset(5, -5) \
                .move_to_element(sq(driver, to)).release().perform()
        else:           # click, click
            sq(driver, frm).click()
            sq(driver, to).click()
        wait(driver, lambda x: x.execute_script("return window.cardinalTiming.length") > n, "the engine reply")
        samples.append(driver.execute_script("return window.cardinalTiming[window.cardinalTiming.length - 1]"))
        wait(driver, lambda x: x.execute_script("return window.cardinal.state.turn") == "w", "our turn")
    assert len(samples) >= 3 and all(s["roundTripMs"] >= s["engineMs"] >= 0 for s in samples)
    assert driver.execute_script("return window.cardinal.state.moves[0]") == "e4"      # the dragged move
    overhead = sorted(s["roundTripMs"] - s["engineMs"] for s in samples)
    report = {"round_trip_minus_engine_ms": [round(x, 1) for x in overhead],
              "median_ms": round(overhead[len(overhead) // 2], 1), "serve_first_page_s": round(first_page, 2)}
    with open(tmp_path / "timings.json", "w") as fh:
        json.dump(report, fh, indent=1)
    print("\nbrowser board timings:", report)


def test_bad_fen_in_the_page_is_reported_and_the_game_kept(driver, server):
    url, _ = server
    viewport(driver, 1280, 800)
    open_page(driver, url, variant="grand", side="both")
    sq(driver, "e3").click()
    sq(driver, "e5").click()
    wait(driver, lambda x: piece(x, "e5") == "wP", "e5 played")
    driver.find_element(By.CSS_SELECTOR, "#fen-box summary").click()
    box = driver.find_element(By.ID, "fen")
    box.clear()
    box.send_keys("r8r/1nbqkcabn1/pppppppppp/10/10 w - - 0 1")
    driver.find_element(By.ID, "btn-fen").click()
    wait(driver, lambda x: "board field" in x.find_element(By.ID, "message").text, "the FEN error")
    assert driver.find_element(By.ID, "message").text.startswith("bad FEN: board field")
    assert piece(driver, "e5") == "wP" and driver.execute_script("return window.cardinal.state.moves") == ["e5"]
