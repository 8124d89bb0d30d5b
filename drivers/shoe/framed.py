"""The framed shoe protocol: our reference binary protocol with CRC, sequence numbers and acks.

    A5 | LEN | TYPE | SEQ (u16 BE) | PAYLOAD (LEN bytes) | CRC-16/CCITT-FALSE (u16 BE)

The CRC covers LEN … PAYLOAD. Reads (card, failed read, cut card) carry sequence numbers 1…65535
(then 1 again); the controller acknowledges them cumulatively once journaled, and the shoe
resends unacknowledged reads whenever it answers a HELLO. The driver drops a sequence number it
has already delivered. A read that comes after a gap is kept back while the driver asks the
shoe for the missing reads again (they are unacknowledged, so the shoe still has them); reads
that never come are handed on as failed reads, in their place, after a SEQ_GAP warning, so
that no later card takes a lost card's place: once the shoe has answered the request without
them and the line has gone quiet, or when it has not answered for a while (a shoe that stalls
for a moment has not lost them). Reads delivered before the shoe's first HELLO are not
delivered again when its answer resends them. A quiet line is asked for a HELLO every second:
a read lost on the way without the link being seen to drop comes back with the answer.
Byte-level details and a worked example: docs/protocols.md.
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from drivers.crc import crc16_ccitt_false
from drivers.events import (CardRead, CutCardSeen, DeviceAlarm, DeviceEvent, DeviceWarning,
                            ReadFailed)
from drivers.shoe.base import ShoeDriverBase
from drivers.shoe.codec import (BadCardCode, BufferedDecoder, ChecksumMismatch, GarbageBytes,
                                MalformedFrame, UnknownToken, check_code)

SOF = 0xA5
MAX_PAYLOAD = 32
VERSION = 1
SEQ_MAX = 65535
#: a quiet line (blocking reads that found nothing) is asked for a HELLO this often, seconds
PROBE_S = 1.0
#: reads after a gap are kept back for the shoe to resend the missing ones until, once it has
#: answered the request for them (its resends follow its answer at once), the line has said
#: nothing for this long, seconds (a burst of reads and resends at 9600 baud takes longer)
GAP_WAIT_S = 0.5
#: ... or until the shoe has not answered for this long, seconds: a shoe (or the computer
#: behind a rig's shoe) that stalls for a moment has not lost its reads
GAP_ANSWER_S = 3.0
#: reads kept back behind a gap, at most (a shoe's worth: what a shoe dealing on while the
#: controller restarted sends in one burst): past that the missing ones are given up at once
MOST_KEPT = 1024
#: missing reads handed on as failed reads, at most (a longer gap: one alarm instead)
MOST_LOST = 8
#: after a restart, the most reads the journal can hold that the shoe never had acknowledged
#: (a live table's 16 staged before a commit, a simulation's batch of 256 inputs, with room to
#: spare): a shoe whose acknowledgements lag further behind the journal started numbering
#: afresh while the controller was away (its reads are new, not resends)
RESUME_WINDOW = 1024

HELLO, CARD, FAILED, CUT, ALARM, WARNING, ACK = 0x01, 0x10, 0x11, 0x12, 0x20, 0x21, 0x30
FACE_UP, MULTIPLE, MANUAL_BURN = 0x01, 0x02, 0x04
_KNOWN_FLAGS = FACE_UP | MULTIPLE | MANUAL_BURN


def next_seq(seq: int) -> int:
    """The sequence number after `seq` (1 … 65535, then 1; after 0 comes 1)."""
    return seq % SEQ_MAX + 1


def seq_at_or_before(a: int, b: int) -> bool:
    """True when read `a` is `b` or older than it, in wrapping sequence arithmetic."""
    return (b - a) % SEQ_MAX < SEQ_MAX // 2


def encode_frame(ftype: int, seq: int = 0, payload: bytes = b"") -> bytes:
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    body = bytes((len(payload), ftype)) + seq.to_bytes(2, "big") + payload
    return bytes((SOF,)) + body + crc16_ccitt_false(body).to_bytes(2, "big")


def _text_payload(code: str, text: str) -> bytes:
    c, t = code.encode("ascii"), text.encode("ascii")
    return bytes((len(c),)) + c + t[:MAX_PAYLOAD - 1 - len(c)]


@dataclass(frozen=True)
class HelloFrame(DeviceEvent):
    """HELLO: from the shoe, its session and last acknowledged read; else a request."""
    session: int | None = None
    last_acked: int = 0
    version: int = VERSION


@dataclass(frozen=True)
class AckFrame(DeviceEvent):
    """ACK from the controller: every read up to and including `seq` is journaled."""
    seq: int = 0


class FramedDecoder(BufferedDecoder):
    """Incremental frame finder: resyncs on SOF, checks LEN and CRC, parses payloads."""


    def expire(self) -> None:
        """The line went quiet inside a frame: drop its SOF as garbage and rescan behind it."""
        if self._buf:
            raw = bytes(self._buf[:1])
            del self._buf[:1]
            raise GarbageBytes("incomplete frame timed out", raw)

    def next(self) -> DeviceEvent | None:
        buf = self._buf
        if not buf:
            return None
        if buf[0] != SOF:
            end = buf.find(SOF)
            end = len(buf) if end < 0 else end
            raw = bytes(buf[:end])
            del buf[:end]
            raise GarbageBytes(f"{len(raw)} byte(s) outside any frame", raw)
        if len(buf) < 2:
            return None
        length = buf[1]
        if length > MAX_PAYLOAD:
            del buf[:1]
            raise GarbageBytes(f"false start: length {length} > {MAX_PAYLOAD}",
                               bytes((SOF, length)))
        size = 7 + length
        if len(buf) < size:
            return None
        frame = bytes(buf[:size])
        if crc16_ccitt_false(frame[1:-2]) != int.from_bytes(frame[-2:], "big"):
            del buf[:1]     # maybe a false start: rescan from the next byte
            raise ChecksumMismatch("CRC mismatch", frame)
        del buf[:size]
        return self._parse(frame[2], int.from_bytes(frame[3:5], "big"), frame[5:-2], frame)

    @staticmethod
    def _parse(ftype: int, seq: int, payload: bytes, raw: bytes) -> DeviceEvent:
        n = len(payload)
        if ftype == CARD:
            if n != 4:
                raise MalformedFrame(f"card payload of {n} bytes, not 4", raw)
            flags, count = payload[0], payload[1]
            if flags & ~_KNOWN_FLAGS or (count < 2 if flags & MULTIPLE else count != 1):
                raise MalformedFrame(f"card flags {flags:#04x} with count {count}", raw)
            try:
                code = check_code(payload[2:].decode("ascii"))
            except (UnicodeDecodeError, ValueError) as err:
                raise BadCardCode(f"impossible card {payload[2:]!r}", raw) from err
            if code != payload[2:].decode("ascii"):
                raise BadCardCode(f"card code {code} not canonical", raw)
            return CardRead(code=code, seq=seq, face_up=bool(flags & FACE_UP),
                            manual_burn=bool(flags & MANUAL_BURN),
                            multiple=count if flags & MULTIPLE else 0, raw=raw)
        if ftype in (FAILED, CUT, ACK):
            if n:
                raise MalformedFrame(f"type {ftype:#04x} carries no payload, got {n} bytes", raw)
            if ftype == FAILED:
                return ReadFailed(seq=seq, raw=raw)
            return CutCardSeen(seq=seq, raw=raw) if ftype == CUT else AckFrame(seq=seq, raw=raw)
        if ftype == HELLO:
            if n == 0:
                return HelloFrame(raw=raw)
            if n != 7:
                raise MalformedFrame(f"hello payload of {n} bytes, not 0 or 7", raw)
            return HelloFrame(version=payload[0], session=int.from_bytes(payload[1:5], "big"),
                              last_acked=int.from_bytes(payload[5:7], "big"), raw=raw)
        if ftype in (ALARM, WARNING):
            size = payload[0] if n else 0
            if not n or 1 + size > n or any(not 0x20 <= b <= 0x7E for b in payload[1:]):
                raise MalformedFrame("alarm/warning text malformed", raw)
            code, text = payload[1:1 + size].decode("ascii"), payload[1 + size:].decode("ascii")
            cls = DeviceAlarm if ftype == ALARM else DeviceWarning
            return cls(code=code, text=text, raw=raw)
        raise UnknownToken(f"unknown frame type {ftype:#04x}", raw)


class FramedEncoder:
    """Shoe actions → framed bytes (for the simulator), plus the controller's frames."""

    sequenced = True

    def card(self, code: str, *, seq: int = 0, face_up: bool = False,
             manual_burn: bool = False, multiple: int = 0) -> bytes:
        flags = (FACE_UP if face_up else 0) | (MANUAL_BURN if manual_burn else 0)
        flags |= MULTIPLE if multiple else 0
        return encode_frame(CARD, seq, bytes((flags, multiple or 1)) + code.encode("ascii"))

    def failed(self, *, seq: int = 0) -> bytes:
        return encode_frame(FAILED, seq)

    def cut(self, *, seq: int = 0) -> bytes:
        return encode_frame(CUT, seq)

    def alarm(self, code: str, text: str) -> bytes:
        return encode_frame(ALARM, 0, _text_payload(code, text))

    def warning(self, code: str, text: str = "") -> bytes:
        return encode_frame(WARNING, 0, _text_payload(code, text))

    def noise(self) -> bytes:
        # includes a false start (SOF then an impossible length) to exercise the resync
        return b"\x00\xa5\xff\x13~#"

    def hello(self, session: int, last_acked: int) -> bytes:
        return encode_frame(HELLO, 0, bytes((VERSION,)) + session.to_bytes(4, "big")
                            + last_acked.to_bytes(2, "big"))

    @staticmethod
    def hello_request() -> bytes:
        return encode_frame(HELLO)

    @staticmethod
    def ack(seq: int) -> bytes:
        return encode_frame(ACK, seq)


class FramedDriver(ShoeDriverBase):
    """Framed shoe: asks for HELLO on every open and on a quiet line, drops duplicates, asks
    again for reads missing behind a gap (failed reads in their place if they never come),
    sends acks."""

    protocol = "framed"
    encoder = FramedEncoder
    resends = True
    flags_multiple_draws = True

    def _make_decoder(self) -> FramedDecoder:
        self._session: int | None = None
        self._last_seq = 0          # last read delivered (or acknowledged before we met the shoe)
        self._acked = 0             # highest read the controller acknowledged
        # events decoded and due next, in order (a gap given up: its warning's followers)
        self._ready: deque[DeviceEvent] = deque()
        self._early: dict[int, DeviceEvent] = {}    # reads after a gap, kept back, by seq
        self._heard_at = 0.0        # when the line last said anything while reads are kept
        self._asked_at = 0.0        # when the reads missing behind the gap were asked for
        self._answered = False      # the shoe has answered (a HELLO) since they were asked for
        # the last read delivered before the shoe's first HELLO (its reads as it stood when met,
        # or those a gap given up let through): their resends are not delivered again
        self._before_met = 0
        self._resumed = 0           # last read journaled before a restart (resume())
        self._resumed_session: int | None = None    # the run of numbers those reads are of
        self._probe_every = max(2, math.ceil(PROBE_S / self.read_timeout_s))
        return FramedDecoder()

    @property
    def buffered(self) -> bool:
        return bool(self._ready) or bool(self._early) or super().buffered

    def _on_open(self) -> None:
        self._send(FramedEncoder.hello_request())

    def _on_idle(self, consecutive_timeouts: int) -> None:
        decoder = self._decoder
        if consecutive_timeouts >= 2 and decoder.pending and isinstance(decoder, FramedDecoder):
            try:
                decoder.expire()
            except GarbageBytes as err:
                self._count_error(err)
        n = self.dead_after_timeouts
        if (n >= 2 and consecutive_timeouts == n // 2) \
                or consecutive_timeouts % self._probe_every == 0:
            # keepalive: an idle shoe still answers, and resends what was never acknowledged
            # (a read lost on the way, the link never seen to drop: the table would wait for
            # it, and the dealer for the table)
            self._send(FramedEncoder.hello_request())

    def resume(self, last_seq: int) -> None:
        if not 1 <= last_seq <= SEQ_MAX:
            raise ValueError(f"sequence number {last_seq} outside 1…{SEQ_MAX}")
        self._resumed = last_seq
        self._last_seq = self._acked = last_seq
        self._early.clear()
        if self._session is not None:
            self._send(FramedEncoder.ack(last_seq))     # the shoe met already: its numbering
        # else the shoe's first HELLO says whether it still numbers the journal's reads

    @property
    def session(self) -> int | None:
        """The session of the shoe's last HELLO (None before one): its run of read numbers,
        new whenever the shoe starts."""
        return self._session

    def resume_session(self, session: int) -> None:
        """After a restart, before `resume`: the session the journal's reads were numbered in
        (as a `ShoeSession` put it on record). A shoe answering with another one started
        afresh meanwhile: its reads are new, whatever their numbers."""
        self._resumed_session = session

    def ack(self, seq: int) -> None:
        if not 1 <= seq <= SEQ_MAX:
            raise ValueError(f"sequence number {seq} outside 1…{SEQ_MAX}")
        if self._acked == 0 or not seq_at_or_before(seq, self._acked):
            self._acked = seq
        self._send(FramedEncoder.ack(seq))

    def _decode(self) -> DeviceEvent | None:
        ready = self._ready
        if ready:
            return ready.popleft()
        early = self._early
        while True:
            event = self._decoder.next()
            if event is None:
                if early and self._not_coming():
                    return self._give_up()  # the shoe had the time to resend them: they are lost
                return None
            if early:
                self._heard_at = self._clock()      # the line is busy: its resends may follow
            if isinstance(event, HelloFrame):
                self._hello(event)
                continue
            if isinstance(event, AckFrame):
                raise UnknownToken("ACK from the shoe side", event.raw)
            seq = getattr(event, "seq", None)
            if not seq:
                return event
            last = self._last_seq
            if last and seq_at_or_before(seq, last):
                self.stats["duplicates"] += 1
                self._log.debug("duplicate read dropped", seq=seq)
                continue
            if seq == next_seq(last) or not (last or self._session is not None):
                # the next read (or the first of a shoe not met yet: it numbers from where it
                # stands); reads kept back behind it follow it now, in order
                self._last_seq = seq
                if self._early:
                    self._release()
                if self._session is None:
                    self._before_met = self._last_seq
                return event
            if seq in self._early:
                # resent, with the reads before it still missing: the shoe has them no more
                return self._give_up()
            if not self._early:
                # reads are missing before this one, and nothing after the last one delivered
                # is acknowledged: the shoe still has them. Asked for again, this one waits
                self._log.info("sequence gap: the missing reads asked for again",
                               expected=next_seq(last), got=seq)
                self._heard_at = self._asked_at = self._clock()
                self._answered = False
                self._send(FramedEncoder.hello_request())
            self._early[seq] = event
            if len(self._early) >= MOST_KEPT:
                return self._give_up()

    def _not_coming(self) -> bool:
        """Whether the reads missing behind the gap will not come: all that arrived is decoded,
        nothing waits on the port, and the line has said nothing for `GAP_WAIT_S` since the
        shoe answered the request for them, or the shoe has not answered for `GAP_ANSWER_S`.
        A reader that comes back late, or a shoe that stalls, finds the resends still to come."""
        now = self._clock()
        if now - self._heard_at < GAP_WAIT_S or \
                (not self._answered and now - self._asked_at < GAP_ANSWER_S):
            return False
        port = self._port
        try:
            return not (port is not None and port.in_waiting)
        except (OSError, ValueError, TypeError):
            return True         # the port's failure is the next read's to report

    def _release(self) -> None:
        """The reads kept back whose turn has come, to be delivered next in their order."""
        early, ready = self._early, self._ready
        while early and (event := early.pop(next_seq(self._last_seq), None)) is not None:
            self._last_seq = next_seq(self._last_seq)
            ready.append(event)

    def _give_up(self) -> DeviceEvent:
        """The reads missing before those kept back never came: a SEQ_GAP warning (returned),
        then a failed read in the place of each (a card left the shoe unread: the table holds
        for it, and no later card takes its place), then the reads kept back."""
        expected = next_seq(self._last_seq)
        first = min(self._early, key=lambda s: (s - expected) % SEQ_MAX)
        missing = (first - expected) % SEQ_MAX
        lost = [(expected - 1 + k) % SEQ_MAX + 1 for k in range(missing)]
        self.stats["seq_gaps"] += 1
        self._log.warning("sequence gap", expected=expected, got=first, lost=missing)
        span = f"read {expected}" if missing == 1 else f"reads {expected}–{lost[-1]}"
        if missing <= MOST_LOST:
            self._ready.extend(ReadFailed(reason=f"read {n} lost on the shoe's link", seq=n)
                               for n in lost)
        else:
            self._ready.append(DeviceAlarm(code="READS_LOST", text=f"{span} lost on the shoe's "
                                           "link: the cards they were are not known"))
        self._last_seq = lost[-1] if lost else self._last_seq
        self._release()
        if self._session is None:
            self._before_met = self._last_seq
        return DeviceWarning(code="SEQ_GAP", text=f"expected read {expected}, got {first}: "
                             f"{span} never came, even when asked for again")

    def _hello(self, hello: HelloFrame) -> None:
        if hello.session is None:
            raise UnknownToken("HELLO request from the shoe side", hello.raw)
        self._answered = True
        if hello.session != self._session:
            self._log.info("shoe session", session=hello.session, last_acked=hello.last_acked)
            first = self._session is None
            self._session = hello.session
            if self._early:
                # the shoe started again: it resends what it kept, numbered anew
                self._log.warning("shoe restarted behind a gap", kept_back=len(self._early))
                self._early.clear()
            self._last_seq = self._acked = hello.last_acked
            resumed = self._resumed
            known = self._resumed_session
            if first and resumed and (not hello.last_acked or
                                      seq_at_or_before(hello.last_acked, resumed)):
                # the shoe the journal knows: the session on record, or (a journal without
                # one) acknowledgements no further behind than a crash leaves them
                same = (hello.session == known) if known is not None else \
                    (resumed - hello.last_acked) % SEQ_MAX <= RESUME_WINDOW
                if same:
                    # the journal is ahead of the shoe's acks (lost with the crash): those
                    # reads are applied already, and their resends are dropped
                    self._last_seq = self._acked = resumed
                    self._send(FramedEncoder.ack(resumed))
                else:
                    # the shoe started again while the controller was away, and numbers its
                    # reads afresh
                    self._log.info("shoe numbering afresh", last_journaled=resumed,
                                   last_acked=hello.last_acked, session=hello.session)
            before = self._before_met
            if first and before and not seq_at_or_before(before, self._last_seq) \
                    and (before - self._last_seq) % SEQ_MAX <= RESUME_WINDOW:
                # reads delivered before the shoe was met come again after its answer: once
                self._last_seq = before
        elif self._acked and (not hello.last_acked
                              or not seq_at_or_before(self._acked, hello.last_acked)):
            self._send(FramedEncoder.ack(self._acked))   # our ack was lost with the link
