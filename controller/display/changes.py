"""What wakes the streams of a web view: `wake` when the view may have changed, on the server's
event loop; each open stream `wait`s for it (or a keep-alive's time) and then sends the newest,
so a slow browser skips to the latest and nothing piles up. The dealer's and players' pages and
the floor's pit view stream through one of these each."""
from __future__ import annotations

import asyncio


class Changes:
    def __init__(self) -> None:
        self.closed = False
        self._changed: asyncio.Future | None = None

    def wake(self) -> None:
        """Every stream waiting now goes on (on the server's loop)."""
        fut, self._changed = self._changed, None
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def wait(self, timeout: float) -> bool:
        """Until the next `wake` (True) or `timeout` seconds pass (False)."""
        if self.closed:
            return False
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._changed), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    def close(self) -> None:
        """The streams end (on the server's loop as it stops)."""
        self.closed = True
        self.wake()
