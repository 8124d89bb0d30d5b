"""Who acts at a simulated table: the virtual dealer (or a blind one), the virtual supervisor
and the players, made here (the commands alone build simulator parts) and handed to the
builder as the actors of the one loop."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from controller.service.build import Person
from controller.service.parts import Listener, Outlet
from controller.settings.profile import Profile

if TYPE_CHECKING:
    from controller.service.runtime import TableRuntime


@dataclass(frozen=True)
class Actors:
    """Who acts at a simulated table (all optional)."""
    dealer: bool = False
    dealer_pace_s: float = 1.0
    blind_pace_s: float | None = None    # a dealer who ignores the table (chaos tests)
    device_tick_s: float = 0.0
    hand_cards: Callable[[int], list[str] | None] | None = None
    supervisor: bool = False
    players: Any = None                  # simulators.dealer.VirtualPlayers
    players_pause_s: float = 0.5         # their pause before a decision (a person's)


class People:
    """The people as the builder's actors; `supervisor` once the table is built."""

    def __init__(self, rig: Any, actors: Actors, profile: Profile):
        self.rig, self.actors, self.profile = rig, actors, profile
        self.supervisor: Any = None

    @property
    def stuck(self) -> str | None:
        """Why the virtual supervisor could not clear a hold, if it could not."""
        return self.supervisor.stuck if self.supervisor is not None else None

    def makers(self) -> tuple[Person, ...]:
        a, rig = self.actors, self.rig
        made: list[Person] = []
        if rig is not None and a.blind_pace_s is not None:
            made.append(self._blind)
        elif rig is not None and a.dealer:
            made.append(self._dealer)
        if a.supervisor:
            made.append(self._supervisor)
        if a.players is not None:
            made.append(self._players)
        return tuple(made)

    def _blind(self, rt: TableRuntime) -> Outlet:
        from simulators.dealer import BlindDealer
        pace = self.actors.blind_pace_s
        assert pace is not None
        return Listener(BlindDealer(self.rig, rt.service.call_later, pace_s=pace).on_event)

    def _dealer(self, rt: TableRuntime) -> Outlet:
        from simulators.dealer import VirtualDealer
        a = self.actors
        return Listener(VirtualDealer(self.rig, rt.submit_dict, rt.service.call_later,
                                      pace_s=a.dealer_pace_s, device_tick_s=a.device_tick_s,
                                      hand_cards=a.hand_cards,
                                      shuffler=rt.shuffler is not None,
                                      after_inputs=rt.service.submit).on_event)

    def _supervisor(self, rt: TableRuntime) -> Outlet:
        from simulators.dealer import VirtualSupervisor
        self.supervisor = VirtualSupervisor(
            self.rig, rt.submit_dict, rt.service.call_later,
            card_when_none_due=self.profile.card_when_none_due,
            face_up_card=self.profile.face_up_card)
        return Listener(self.supervisor.on_event)

    def _players(self, rt: TableRuntime) -> Outlet:
        from simulators.dealer import PlayersActor
        return Listener(PlayersActor(self.actors.players, rt.submit_dict,
                                     rt.service.call_later,
                                     delay_s=self.actors.players_pause_s).on_event)
