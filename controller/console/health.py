"""The health view in plain lines, for `tablectl status` and the console's Health panel: pure
functions that never raise on a missing or odd field (an older controller may send less)."""
from __future__ import annotations

from typing import Any, Mapping


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _bytes(n: Any) -> str:
    if not isinstance(n, (int, float)):
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return "?"


def _ago(age: Any) -> str:
    return f" ({age:g} s ago)" if isinstance(age, (int, float)) else ""


def problems(h: Mapping[str, Any]) -> list[str]:
    """What needs someone's attention, most pressing first (empty when all is well)."""
    out = [str(text) for text in _d(h.get("conditions")).values()]
    shoe = _d(_d(h.get("devices")).get("shoe"))
    if shoe.get("link") == "lost":
        out.append("the shoe's link is lost")
    if _d(_d(h.get("devices")).get("shuffler")).get("link") == "error":
        out.append("the shuffler's last request failed")
    if h.get("reads_queued"):
        out.append(f"{h['reads_queued']} read(s) kept under the hold wait for a supervisor")
    clock = _d(h.get("clock"))
    if clock.get("synchronised") is False:
        out.append("the clock is not synchronised")
    if clock.get("jumps"):
        out.append(f"the wall clock jumped {clock['jumps']} time(s) "
                   f"(last {clock.get('last_jump_s')} s)")
    sw = _d(h.get("software"))
    if sw.get("approval") == "unapproved" and not sw.get("accepted") \
            and "software" not in _d(h.get("conditions")):
        out.append("the software is not approved")
    feed = _d(h.get("feed"))
    if feed.get("problem"):
        out.append(f"floor feed: {feed['problem']}")
    journal = _d(h.get("journal"))
    if "anchors" in journal and journal["anchors"] is None and not h.get("simulator"):
        # a live table should sign its journal: without it a rewritten journal goes unnoticed
        out.append("the journal's head is not signed: give it an anchor key "
                   "([storage] anchor_key_file)")
    return out


def health_lines(h: Mapping[str, Any]) -> list[str]:
    """The health view, one aspect a line."""
    from controller.words.fields import field
    lines = [f"Table {h.get('table', '?')}: {field('state', h.get('state', 'unknown'), 'en')}"
             + ("   SIMULATOR" if h.get("simulator") else "")]
    for p in problems(h):
        lines.append(f"  ! {p}")
    devices = _d(h.get("devices"))
    shoe = _d(devices.get("shoe"))
    if shoe.get("link") not in (None, "none"):
        line = f"Shoe      {shoe.get('url', '?')} ({shoe.get('protocol', '?')}): {shoe['link']}"
        if shoe.get("waiting"):
            line += f" ({shoe['waiting']})"
        line += (f"; last read {shoe['last_read']}{_ago(shoe.get('last_read_age_s'))}"
                 if shoe.get("last_read") else "; no read yet")
        lines.append(line)
        c = _d(shoe.get("counters"))
        lines.append("          " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in c.items()))
    shuffler = _d(devices.get("shuffler"))
    if shuffler.get("link") in (None, "none"):
        lines.append("Shuffler  none (hand-shuffled shoes)")
    else:
        line = f"Shuffler  {shuffler.get('url', '?')}: {shuffler['link']}"
        if shuffler.get("last_contact"):
            line += f"; last answer {shuffler['last_contact']}{_ago(shuffler.get('last_contact_age_s'))}"
        if shuffler.get("last_error"):
            line += f"; last error: {shuffler['last_error']}"
        lines.append(line)
    lines.append(f"Reads kept under a hold: {h.get('reads_queued', 0)}")
    j = _d(h.get("journal"))
    line = (f"Journal   {j.get('path', '?')}: {_bytes(j.get('bytes'))}, "
            f"last seq {j.get('last_seq', '?')}")
    if "anchors" in j:
        a = _d(j.get("anchors"))
        line += (f"; head signed (key {a.get('key_id', '?')}, {a.get('count', 0)} anchor(s), "
                 f"{a.get('since_last', 0)} record(s) since the last)" if a
                 else "; head not signed (no anchor key)")
    lines.append(line)
    feed = _d(h.get("feed"))
    if feed:
        lag = feed.get("lag_events", feed.get("behind", 0))
        current = (not lag or feed.get("late") is False) and feed.get("connected")
        state = "up to date" if current else f"behind by {lag} event(s)"
        lines.append(f"Feed      {feed.get('broker', '?')}: {state}"
                     + (f" ({feed['problem']})" if feed.get("problem") else ""))
    else:
        lines.append("Feed      none")
    clock = _d(h.get("clock"))
    if clock:
        synced = {True: "synchronised", False: "NOT synchronised", None: "unknown"}.get(
            clock.get("synchronised"), "unknown")
        lines.append(f"Clock     {synced} ({clock.get('source') or '?'}: "
                     f"{clock.get('detail') or 'not checked yet'}); jumps {clock.get('jumps', 0)}")
    sw = _d(h.get("software"))
    if sw:
        state = {"approved": "approved", "unapproved": "NOT APPROVED",
                 "unchecked": "not checked"}.get(str(sw.get("approval")), "?")
        if sw.get("accepted"):
            acc = _d(sw["accepted"])
            state = f"accepted by {acc.get('user')} at {acc.get('utc')} (not on the approved list)"
        lines.append(f"Software  {sw.get('software_sha256', '?')}: {state}")
        lines.append(f"          release {sw.get('release_sha256', '?')}")
        if sw.get("dependencies"):
            lines.append(f"          dependencies {sw['dependencies']}")
    return lines
