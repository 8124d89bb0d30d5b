"""The journal's hash chain: canonical JSON, record and snapshot hashes, chain checking.

Each record's hash is sha256(prev_hash + canonical JSON of {seq, utc, mono, kind, data}), the
first record's prev_hash being GENESIS. Canonical JSON: keys sorted, no spaces, ASCII only, no
NaN/Infinity. A snapshot's hash is sha256(hash of the record it covers up to + canonical JSON of
{upto_seq, utc, state}), so a snapshot is tied to the chain head it was taken at.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _quote
from json.encoder import c_make_encoder  # type: ignore[attr-defined]
from typing import Callable, Iterable

#: prev_hash of the first record (and the head of an empty journal).
GENESIS = "0" * 64

_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                          allow_nan=False).encode


_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _chunker(sort_keys: bool) -> Callable[[object, int], Iterable[str]]:
    """The C encoder itself, made once: (value, 0) → the text's chunks (no check for circular
    references: a value nested too deep raises RecursionError)."""
    if c_make_encoder is None:                   # a Python without the C accelerator
        dumps = _dumps if sort_keys else _compact
        return lambda value, _level: (dumps(value),)
    return c_make_encoder(None, _refuse, _quote, None, ":", ",", sort_keys, False, False)


def _encoder(sort_keys: bool) -> Callable[[object], str]:
    """The same text as `_dumps` (sorted) or `_compact`, from one C encoder made once rather
    than one made for every value (the journal encodes every record it appends and checks)."""
    enc = _chunker(sort_keys)

    def encode(value: object) -> str:
        try:
            return "".join(enc(value, 0))
        except RecursionError:
            raise ValueError("Circular reference detected") from None
    return encode


_fast_canonical, _fast_compact = _encoder(True), _encoder(False)
#: `_fast_compact`'s C encoder without its Python wrapper, for the append path's loops
_compact_chunks = _chunker(False)


def _scanner() -> Callable[[str, int], tuple[object, int]]:
    """json.loads' own C scanner, called without its Python wrapper."""
    from json.scanner import make_scanner
    # the decoder is the scanner's context at run time; typeshed names another type for it
    return make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


_scan, _canon_chunks = _scanner(), _chunker(True)


def canonical(value: object) -> str:
    """Canonical JSON text of a JSON-ready value; ValueError/TypeError when it is not one."""
    return _fast_canonical(value)


def stored_and_canonical(value: object) -> tuple[str, str]:
    """(text to store, keys in their given order; canonical text to hash) of a JSON-ready value.

    Records keep their keys' order for readers (bets in paytable order, player before banker);
    the hash covers the canonical form, which any reader can rebuild from the stored text.
    The canonical text is made from the stored text read back, exactly as a reader does (so
    non-string keys, tuples and the like cannot make writer and reader disagree).
    """
    text = _fast_compact(value)
    return text, _fast_canonical(json.loads(text))


def record_canonical(seq: int, utc: str, mono: float, kind: str, data_json: str) -> str:
    """canonical({"seq", "utc", "mono", "kind", "data"}) built around canonical data text.

    Equal to canonical(dict(seq=…, utc=…, mono=…, kind=…, data=data)) (sorted keys: data, kind,
    mono, seq, utc), without encoding the data a second time on the append path.
    """
    return (f'{{"data":{data_json},"kind":{_dumps(kind)},"mono":{_dumps(mono)},'
            f'"seq":{_dumps(seq)},"utc":{_dumps(utc)}}}')


def record_hash(prev_hash: str, seq: int, utc: str, mono: float, kind: str, data_json: str) -> str:
    if type(seq) is int and type(mono) is float and mono - mono == 0.0 \
            and type(kind) is str and type(utc) is str:
        # the common case without an encoder call per field (the same text: tests hold it)
        text = (f'{prev_hash}{{"data":{data_json},"kind":{_quote(kind)},'
                f'"mono":{float.__repr__(mono)},"seq":{seq},"utc":{_quote(utc)}}}')
    else:
        text = prev_hash + record_canonical(seq, utc, mono, kind, data_json)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def snapshot_hash(head_hash: str, upto_seq: int, utc: str, state_json: str) -> str:
    text = head_hash + f'{{"state":{state_json},"upto_seq":{_dumps(upto_seq)},"utc":{_dumps(utc)}}}'
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class VerifyResult:
    """What verify() found: ok, or the first broken record (seq, why) or bad snapshot."""

    records_checked: int
    last_seq: int
    first_bad_seq: int | None = None
    reason: str | None = None
    snapshots_checked: int = 0
    bad_snapshot_id: int | None = None
    snapshot_reason: str | None = None
    snapshots_unbound: int = 0          # from before schema 3: never trusted at a restart

    @property
    def ok(self) -> bool:
        return self.first_bad_seq is None and self.bad_snapshot_id is None

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        if self.first_bad_seq is not None:
            return (f"chain broken at seq {self.first_bad_seq}: {self.reason} "
                    f"({self.records_checked} records before it are intact)")
        if self.bad_snapshot_id is not None:
            return f"snapshot {self.bad_snapshot_id} rejected: {self.snapshot_reason}"
        unbound = (f" ({self.snapshots_unbound} taken before snapshots were bound into the "
                   "chain: not used at a restart)") if self.snapshots_unbound else ""
        return (f"ok: {self.records_checked} records checked up to seq {self.last_seq}, "
                f"chain intact, {self.snapshots_checked} snapshots verified{unbound}")

    def as_dict(self) -> dict:
        return {"ok": self.ok, "records_checked": self.records_checked, "last_seq": self.last_seq,
                "first_bad_seq": self.first_bad_seq, "reason": self.reason,
                "snapshots_checked": self.snapshots_checked,
                "bad_snapshot_id": self.bad_snapshot_id, "snapshot_reason": self.snapshot_reason,
                "snapshots_unbound": self.snapshots_unbound}


@dataclass(frozen=True)
class Break:
    """The first broken record of a chain: its seq and why."""

    seq: int
    reason: str

    @classmethod
    def out_of_seq(cls, seq: int, expected: int) -> "Break":
        """The break where the stored `seq` is not the `expected` next one."""
        return cls(expected, f"missing seq (next stored record is seq {seq})" if seq > expected
                   else f"out of order (seq {seq} stored where {expected} belongs)")


def json_object(text: object, what: str) -> tuple[dict | None, str | None]:
    """(the object, None) for stored JSON text holding an object, else (None, why)."""
    if not isinstance(text, str):
        return None, f"bad JSON: {what} is not text"
    try:
        value = json.loads(text)
    except ValueError as err:
        return None, f"bad JSON: {err}"
    if not isinstance(value, dict):
        return None, f"bad JSON: {what} is not an object"
    return value, None


def check_record(prev_hash: str, seq: int, utc: object, mono: object, kind: object,
                 data_text: object, stored_hash: object) -> str | None:
    """Why one stored record breaks the chain after `prev_hash`, or None when it links."""
    if not isinstance(utc, str) or not isinstance(kind, str) or not kind:
        return "bad record: utc and kind must be text"
    if not isinstance(mono, (int, float)) or isinstance(mono, bool):
        return "bad record: mono is not a number"
    data, problem = json_object(data_text, "data")
    if problem:
        return problem
    try:
        data_json = canonical(data)
    except ValueError as err:
        return f"bad JSON: {err}"
    if record_hash(prev_hash, seq, utc, float(mono), kind, data_json) == stored_hash:
        return None
    shown = stored_hash[:12] if isinstance(stored_hash, str) else repr(stored_hash)
    return f"hash mismatch (stored {shown}…, does not match its content and the record before)"


def check_chain(rows: Iterable[tuple], first_seq: int,
                prev_hash: str) -> tuple[int, str, Break | None]:
    """Walk rows (seq, utc, mono, kind, data, hash) in seq order from `first_seq`.

    Returns (records checked, last good hash, first break or None). The common case (a record
    of the expected types whose hash matches) is computed inline, the same text as
    `record_canonical` builds (tests hold the two equal); anything else goes through
    `check_record`, which says why.
    """
    expected = first_seq
    checked = 0
    scan, canon, sha256, frepr = _scan, _canon_chunks, hashlib.sha256, float.__repr__
    join = "".join
    for seq, utc, mono, kind, data_text, stored in rows:
        if seq != expected:
            return checked, prev_hash, Break.out_of_seq(seq, expected)
        try:
            if type(mono) is not float or type(kind) is not str or type(utc) is not str:
                raise TypeError
            # the stored text decoded by the C scanner itself (json.loads adds a Python
            # wrapper a record); text after the object sends it to the careful path
            data, end = scan(data_text, 0)
            if type(data) is not dict or not kind or end != len(data_text):
                raise TypeError
            text = (f'{prev_hash}{{"data":{join(canon(data, 0))},"kind":{_quote(kind)},'
                    f'"mono":{frepr(mono)},"seq":{seq},"utc":{_quote(utc)}}}')
            good = sha256(text.encode("ascii")).hexdigest() == stored
        except (TypeError, ValueError, StopIteration, RecursionError):
            good = False
        if not good:
            problem = check_record(prev_hash, seq, utc, mono, kind, data_text, stored)
            if problem is not None:
                return checked, prev_hash, Break(seq, problem)
        prev_hash = stored
        checked += 1
        expected += 1
    return checked, prev_hash, None
