"""Time the roads and the web display.

    python bench/roads.py [--shoes 200] [--seed 1] [--browser-rounds 30] [--no-browser] [--json]

1. Roads: the same dealt shoes (the pure rules path, macau) through `controller.roads`:
   - incremental: one `Roads.add` per round, as the display does;
   - from scratch: the roads rebuilt from the shoe's first round after every round, as a
     display without incremental state would;
   - the roads JSON (`to_json`, what /api/roads and every update send) at the end of a shoe.
2. The display on the table's loop: what `DisplayHub.publish` costs the loop per event.
3. Latency, round result → browser DOM: `tablectl run` on the embedded simulator with
   `--http`, headless Chromium (Selenium) on the scoreboard; for each result, the time from
   its publication on the table's loop (`shown_at`) to the page having drawn it (`drawn_at`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.games.deal import deal_shoe, shuffled_shoes  # noqa: E402
from controller.settings.profile import load_profile  # noqa: E402
from controller.roads import Roads, entry_of  # noqa: E402


def dealt_shoes(n: int, seed: int) -> list[list[dict]]:
    profile = load_profile("macau")
    shoes = []
    for codes, _ in zip(shuffled_shoes(profile, seed), range(n)):
        entries = [entry_of(r.event()) for r in deal_shoe(profile, codes)]
        shoes.append([e for e in entries if e is not None])
    return shoes


def bench_roads(shoes: list[list[dict]]) -> dict:
    rounds = sum(len(s) for s in shoes)
    t = time.perf_counter()
    for shoe in shoes:
        roads = Roads()
        for entry in shoe:
            roads.add(**entry)
    incremental = time.perf_counter() - t
    t = time.perf_counter()
    for shoe in shoes:
        for i in range(1, len(shoe) + 1):
            roads = Roads()
            for entry in shoe[:i]:
                roads.add(**entry)
    scratch = time.perf_counter() - t
    t = time.perf_counter()
    for shoe in shoes:
        roads = Roads()
        for entry in shoe:
            roads.add(**entry)
        json.dumps(roads.to_json())
    with_json = time.perf_counter() - t - incremental
    return {"shoes": len(shoes), "rounds": rounds,
            "add_us_per_round": incremental / rounds * 1e6,
            "shoe_incremental_ms": incremental / len(shoes) * 1e3,
            "scratch_us_per_round": scratch / rounds * 1e6,
            "shoe_scratch_ms": scratch / len(shoes) * 1e3,
            "json_ms_full_shoe": with_json / len(shoes) * 1e3}


def bench_publish(events: int = 20000) -> dict:
    """DisplayHub.publish from this thread while the server's loop drains on another."""
    from controller.display.hub import DisplayHub
    from controller.display.public import PublicView
    hub = DisplayHub(PublicView())
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    loop.call_soon_threadsafe(hub.attach, loop)
    time.sleep(0.05)
    event = {"event": "card", "shoe": 1, "round": 1, "slot": "P1", "code": "9H"}
    t = time.perf_counter()
    for i in range(events):
        hub.publish(dict(event, seq=i + 1))
        hub.flush()             # as the status that ends every input does
    spent = time.perf_counter() - t
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    return {"publish_us_per_event": spent / events * 1e6}


def bench_latency(rounds: int, pace: float) -> dict:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not (chromium and driver_path):
        raise SystemExit("bench/roads.py: install chromium and chromium-driver, or --no-browser")
    work = Path(tempfile.mkdtemp(prefix="roads-bench-"))
    log = work / "run.err"          # a file, not a pipe: nobody must have to keep reading it
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", "config/table.toml",
             "--pace", str(pace), "--seed", "3", "--no-control", "--journal",
             str(work / "j.db"), "--http", "127.0.0.1:0", "--json"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={work / 'chromium'}"):
        options.add_argument(flag)
    browser = None
    try:
        url = None
        while url is None:
            if proc.poll() is not None:
                raise SystemExit(f"bench/roads.py: tablectl run stopped: {log.read_text()}")
            found = re.search(r"web display at (http://\S+)", log.read_text())
            if found:
                url = found.group(1)
            else:
                time.sleep(0.05)
        browser = webdriver.Chrome(service=Service(executable_path=driver_path),
                                   options=options)
        browser.get(url)
        deadline = time.monotonic() + 120
        renders: list = []
        while time.monotonic() < deadline:
            renders = [r for r in browser.execute_script("return window.scoreboard.renders")
                       if r["shown_at"]]
            if len({r["round"] for r in renders}) > rounds:
                break
            time.sleep(0.2)
    finally:
        if browser is not None:
            browser.quit()
        proc.terminate()
        proc.wait(timeout=15)
    # new results only: the first drawing, on loading, shows one published before the page
    ms = sorted((r["drawn_at"] - r["shown_at"]) * 1e3 for prev, r in zip(renders, renders[1:])
                if (r["shoe"], r["round"]) != (prev["shoe"], prev["round"]))
    return {"latency_rounds": len(ms), "latency_ms_p50": statistics.median(ms),
            "latency_ms_p95": ms[int(0.95 * (len(ms) - 1))], "latency_ms_max": ms[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shoes", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--browser-rounds", type=int, default=30)
    ap.add_argument("--pace", type=float, default=0.05, help="the simulated dealer's pace")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--json", action="store_true", help="one JSON line")
    args = ap.parse_args()
    out = bench_roads(dealt_shoes(args.shoes, args.seed))
    out.update(bench_publish())
    if not args.no_browser:
        out.update(bench_latency(args.browser_rounds, args.pace))
    if args.json:
        print(json.dumps(out))
        return
    print(f"roads of {out['shoes']} macau shoes ({out['rounds']} rounds entering the roads)")
    print(f"  incremental     {out['add_us_per_round']:8.2f} µs a round   "
          f"{out['shoe_incremental_ms']:7.3f} ms a shoe")
    print(f"  from scratch    {out['scratch_us_per_round']:8.2f} µs a round   "
          f"{out['shoe_scratch_ms']:7.3f} ms a shoe   "
          f"({out['scratch_us_per_round'] / out['add_us_per_round']:.0f}× the incremental)")
    print(f"  roads JSON of a full shoe           {out['json_ms_full_shoe']:7.3f} ms")
    print(f"display on the table's loop: {out['publish_us_per_event']:.2f} µs per event published")
    if "latency_rounds" in out:
        print(f"round result → browser DOM over {out['latency_rounds']} rounds: "
              f"p50 {out['latency_ms_p50']:.1f} ms, p95 {out['latency_ms_p95']:.1f} ms, "
              f"max {out['latency_ms_max']:.1f} ms")


if __name__ == "__main__":
    main()
