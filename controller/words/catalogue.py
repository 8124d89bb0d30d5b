"""The one message catalogue: every sentence a person reads, by code, in English.

A code names what is said (`prompt.deal`, `problem.foreign_card`); the English is the gettext
msgid, the code its msgctxt, so the translations in `locale/<lang>/LC_MESSAGES/tablectl.po`
follow the English. Placeholders are named fields, `{card}`, `{n}`…; what a field's name says
about its value (a card, a step, a state, a number) decides how it is written in each language
(`controller.words.fields`). A plural message is (singular, plural) and counts its `{n}`.

Nothing here names a state, trigger, action or field of the machine as the program spells it:
a test scans every message for those names.
"""
from __future__ import annotations

Message = str | tuple[str, str]

PROMPTS: dict[str, Message] = {
    "prompt.load_shoe": "Load a new shoe",
    "prompt.count_back_reader": "Count back: read the rest of the shoe through the reader",
    "prompt.count_back_shuffler": "Count back: put the rest of the shoe into the shuffler",
    "prompt.shuffling": "Shuffling…",
    "prompt.turn_burn_card": "Turn the first card for the burn",
    "prompt.burn_more": ("Burn {n} more card", "Burn {n} more cards"),
    "prompt.reveal": "Reveal the cards",
    "prompt.open_bets": "Open bets",
    "prompt.bets_open": "Bets open",
    "prompt.house_burn": "House burn: draw one card from the shoe and burn it",
    "prompt.house_burn_confirm": "House burn announced: wait for a supervisor to confirm it",
    "prompt.hold": "On hold: {problem}",
    "prompt.hold_plain": "On hold",
    "prompt.hold_kept": ("On hold: {problem} {n} read came meanwhile; it waits with the hold.",
                         "On hold: {problem} {n} reads came meanwhile; they wait with the hold."),
    "prompt.virtual_supervisor": "{problem} The virtual supervisor clears it.",
    # service conditions: the table cannot deal yet, whatever its own state
    "prompt.no_shoe_yet": "No shoe yet: the table waits for its shoe to be connected and tries "
                          "again by itself",
    "prompt.software_held": "This software is not approved for the table: a manager must accept "
                            "it before anything is dealt",
    "prompt.journal_check": "Checking the journal: {done} of {total} records checked; dealing "
                            "starts when every one is",
    "prompt.link_back": ("On hold: the shoe's link is back; {n} card was read while it was down "
                         "({cards}): accept or discard it",
                         "On hold: the shoe's link is back; {n} cards were read while it was "
                         "down ({cards}): accept or discard them"),
    "prompt.burn_one": "Burn one card",
    "prompt.deal": "Deal {step}",
    "prompt.decide": "Decide {decision}: {choices}",
}

STEPS: dict[str, Message] = {
    "step.P1": "the Player's first card", "step.B1": "the Banker's first card",
    "step.P2": "the Player's second card", "step.B2": "the Banker's second card",
    "step.player_third": "the Player's third card", "step.banker_third": "the Banker's third card",
    "step.game_card": "the game card", "step.andar": "the next card to Andar",
    "step.bahar": "the next card to Bahar", "step.R1": "the right hand's first card",
    "step.L1": "the left hand's first card", "step.R2": "the right hand's second card",
    "step.L2": "the left hand's second card", "step.right_third": "the right hand's third card",
    "step.left_third": "the left hand's third card", "step.bank_third": "the bank's third card",
    "step.bank1": "the bank's first card", "step.bank2": "the bank's second card",
    "step.burn": "the burn card", "step.decide": "a decision",
    "step.unknown": "the next card",
}

DECISIONS: dict[str, Message] = {
    "decision.player_draw": "whether the Player draws",
    "decision.banker_draw": "whether the Banker draws",
    "decision.right_draw": "whether the right hand draws",
    "decision.left_draw": "whether the left hand draws",
    "decision.bank_draw": "whether the bank draws",
    "decision.banker_seat": "who holds the bank", "decision.active_player": "who plays the hand",
    "decision.right_player": "who plays the right hand",
    "decision.left_player": "who plays the left hand",
    "decision.unknown": "the decision asked for",
    "choice.draw": "draw", "choice.stand": "stand", "choice.seat": "seat {n}",
}

STATES: dict[str, Message] = {
    "state.closed": "no shoe is loaded", "state.shuffling": "the shuffler is shuffling",
    "state.loaded": "the shoe is loaded and waits for its burn",
    "state.burning": "the new shoe is being burned", "state.idle": "between rounds",
    "state.betting": "bets are open", "state.hold": "on hold",
    "state.shoe_ended": "the shoe has ended", "state.dealing": "a round is being dealt",
    "state.unknown": "busy",
}

#: what happened, for the supervisor (the hold panel, the console's irregularities)
PROBLEMS: dict[str, Message] = {
    "problem.unreadable_card": "The shoe could not read a card: enter it from the card on the "
                               "layout, or void the round.",
    "problem.unreadable_card_burn": "The shoe could not read a card of the new shoe's burn: "
                                    "enter it from the card turned over.",
    "problem.unread_card": "The dealer saw a card leave the shoe without a read: enter it from "
                           "the card on the layout, or void the round.",
    "problem.card_not_due": "{card} was drawn while no card was due ({state}).",
    "problem.card_while_betting": "{card} was drawn while bets were still open.",
    "problem.foreign_card": "{card} does not belong to this shoe: take it out of play.",
    "problem.face_up_card": "{card} came out of the shoe face up.",
    "problem.face_up_reported": "The dealer reports that {card} came out face up.",
    "problem.count_mismatch": "The shuffler counted {counted} cards; this shoe must hold "
                              "{expected}.",
    "problem.count_wrong_cards": "The shuffler counted {counted} cards, but not the shoe's: too "
                                 "many of {extra}, too few of {missing}.",
    "problem.device_alarm": "The {device} raised an alarm ({alarm}).",
    "problem.impossible_card": "The shoe reported a card that does not exist.",
    "problem.card_without_shoe": "A card was read while no shoe was loaded.",
    "problem.internal_error": "The controller met an error it did not expect; the technician "
                              "finds it in the log.",
    "problem.hold": "A supervisor stopped the table.",
    "problem.hold_note": "A supervisor stopped the table: {note}",
    "problem.dealer_call": "The dealer called a supervisor to the table.",
    "problem.link_lost": "The link to the {device} was lost; cards read meanwhile are kept for "
                         "you to accept or discard once it is back.",
    "problem.restart_review": "The controller restarted during a round: check the cards on the "
                              "table ({cards}) against the record before dealing goes on.",
    "problem.restart_review_burn": "The controller restarted during the new shoe's burn: check "
                                   "the burned cards ({cards}) before dealing goes on.",
    "problem.restart_review_count": ("The controller restarted while the rest of the shoe was "
                                     "read back ({n} card counted so far): check the count "
                                     "before it goes on.",
                                     "The controller restarted while the rest of the shoe was "
                                     "read back ({n} cards counted so far): check the count "
                                     "before it goes on."),
    "problem.integrity_alarm": "The cards come out in an order a shuffled shoe does not give "
                               "(new-deck order, or a repeat of an earlier shoe).",
    "problem.missed_shoe_burn": "A round was started before the new shoe was burned: the shoe is "
                                "invalid and must be replaced.",
    "problem.false_coup": "A hand drew or stood against the drawing rules (false coup); the coup "
                          "is void unless you decide otherwise.",
    "problem.multiple_cards": "Several cards left the shoe together; they were taken in read "
                              "order.",
    "problem.misplaced_cards": "The dealer reported cards on the wrong box; the shoe's order "
                               "stands: {cards}.",
    "problem.unknown": "The table stopped for a reason this console does not know; see the log.",
}

#: a hold in words for the dealer and the public page (never a card's identity)
DEALER_HOLDS: dict[str, Message] = {
    "dealer.unreadable_card": "The shoe could not read a card. Wait for the supervisor.",
    "dealer.card_not_due": "A card left the shoe when none was due. Wait for the supervisor.",
    "dealer.card_while_betting": "A card was drawn while bets were open. Wait for the "
                                 "supervisor.",
    "dealer.foreign_card": "A card that is not of this shoe was read. Wait for the supervisor.",
    "dealer.face_up_card": "A card came out face up. Wait for the supervisor.",
    "dealer.count_mismatch": "The shuffler's card count is wrong. Wait for the supervisor.",
    "dealer.device_alarm": "A device raised an alarm. Wait for the supervisor.",
    "dealer.link_lost": "The link to the shoe is lost. Leave the cards where they are.",
    "dealer.restart_review": "The controller restarted. The supervisor checks the cards on the "
                             "table.",
    "dealer.integrity_alarm": "The cards come out in an unshuffled order. Stop dealing.",
    "dealer.missed_shoe_burn": "A round was started before the shoe was burned. Stop dealing.",
    "dealer.false_coup": "A hand drew or stood against the rules. Wait for the supervisor.",
    "dealer.hold": "The supervisor has stopped the table.",
    "dealer.dealer_call": "A supervisor is called to the table.",
    "dealer.unknown": "The table is on hold. Wait for the supervisor.",
}

#: a problem's short name (in a list of holds, or a refusal that names one)
KINDS: dict[str, Message] = {
    "kind.unreadable_card": "a card the shoe could not read",
    "kind.card_not_due": "a card drawn when none was due",
    "kind.card_while_betting": "a card drawn while bets were open",
    "kind.foreign_card": "a card from another shoe", "kind.face_up_card": "a face-up card",
    "kind.count_mismatch": "the shuffler's count", "kind.device_alarm": "a device alarm",
    "kind.impossible_card": "a card that does not exist",
    "kind.card_without_shoe": "a card without a shoe",
    "kind.internal_error": "an unexpected error", "kind.hold": "a supervisor's hold",
    "kind.link_lost": "a lost link", "kind.restart_review": "a restart during a round",
    "kind.integrity_alarm": "an unshuffled shoe", "kind.missed_shoe_burn": "a missed burn",
    "kind.false_coup": "a false coup", "kind.multiple_cards": "cards drawn together",
    "kind.misplaced_cards": "cards on the wrong box", "kind.dealer_call": "the dealer's call",
    "kind.card_entered": "a card entered by hand",
    "kind.unknown": "another problem",
}

ROLES: dict[str, Message] = {
    "role.dealer": "dealer", "role.supervisor": "supervisor", "role.manager": "manager",
    "role.auditor": "auditor", "role.system": "the controller",
}

DEVICES: dict[str, Message] = {
    "device.shoe": "shoe", "device.shuffler": "shuffler", "device.dealer": "dealer",
    "device.inventory": "card count", "device.unknown": "device",
}

#: every action a person can take, as a button or a form shows it: title, then what it does
ACTIONS: dict[str, Message] = {
    "action.hold": "Hold", "action.resume": "Resume", "action.void_round": "Void round",
    "action.enter_card": "Enter card", "action.burn_card": "Burn card",
    "action.remove_card": "Remove card", "action.confirm_layout": "Confirm layout",
    "action.end_shoe": "End shoe", "action.change_shoe": "Change shoe",
    "action.accept_count": "Accept count", "action.reject_count": "Reject count",
    "action.demo_round": "Demo round", "action.switch_mode": "Switch mode",
    "action.accept_reads": "Accept reads", "action.discard_reads": "Discard reads",
    "action.return_reads": "Give reads back",
    "action.decide": "Decide", "action.open_bets": "Open bets", "action.close_bets": "Close bets",
    "action.start_round": "Start round", "action.confirm_result": "Confirm result",
    "action.report_misplaced": "Misplaced cards", "action.report_face_up": "Face-up card",
    "action.report_unread": "Unread card", "action.call_supervisor": "Call supervisor",
    "action.cut_card": "Cut card out", "action.shoe_empty": "Shoe empty",
    "action.count_done": "Count done", "action.reveal": "Reveal",
    "action.stake": "Stake", "action.banco": "Banco", "action.accept_stakes": "Accept stakes",
    "action.new_shoe": "New shoe", "action.change_profile": "Change profile",
    "action.users": "Accounts", "action.state": "View the table", "action.recall": "Recall",
    "action.audit": "Audit", "action.accept_software": "Accept software",
    "action.abandon_shoe": "Close the shoe",
    "action.house_burn": "House burn", "action.confirm_house_burn": "Confirm house burn",
    "action.withdraw_house_burn": "Withdraw house burn",
    "action.declare_invalid": "Declare shoe invalid",
    "action.unknown": "this action",
}

HELP: dict[str, Message] = {
    "help.hold": "Stop the table: no card or bet is taken until it resumes.",
    "help.resume": "Go on from where the table stopped, once the cause has been dealt with.",
    "help.void_round": "Cancel the round in progress; every bet on it is returned.",
    "help.enter_card": "Type the card the shoe could not read (look at the card on the layout); "
                       "dealing goes on with it.",
    "help.burn_card": "Burn the card that stopped the table (drawn when none was due, face up, "
                      "or while bets were open) and go on.",
    "help.remove_card": "Take a card that does not belong to this shoe out of play and go on.",
    "help.confirm_layout": "Confirm that the cards on the layout are the ones recorded.",
    "help.end_shoe": "End this shoe now, between rounds.",
    "help.change_shoe": "End this shoe so that a new one is loaded.",
    "help.accept_count": "Accept the shuffler's card count and load the shoe anyway.",
    "help.reject_count": "Reject the shuffler's card count: the shoe is shuffled and counted "
                         "again.",
    "help.demo_round": "Play one more demonstration round at the start of the shoe.",
    "help.switch_mode": "Change the paytable mode, between rounds.",
    "help.accept_reads": "The shoe's link is back: the cards it read while it was down are the "
                         "cards on the table; deal them in the order read.",
    "help.discard_reads": "The shoe's link is back, but the cards it read meanwhile are not "
                          "trusted: take them out of play, void the round and end the shoe.",
    "help.return_reads": "The cards read while the table was on hold (and a card drawn when "
                         "none was due) were not dealt from this shoe: they go back, and none "
                         "of them counts in the shoe.",
    "help.decide": "Give a decision the game waits for.",
    "help.open_bets": "Open the bets for the next round.",
    "help.close_bets": "Close the bets: no more bets; dealing starts.",
    "help.report_misplaced": "You placed cards on the wrong box: the shoe's order stands and the "
                             "layout shows where each card belongs.",
    "help.report_face_up": "A card came out of the shoe face up and the shoe cannot tell: the "
                           "table stops for the supervisor.",
    "help.report_unread": "A card left the shoe without being read.",
    "help.call_supervisor": "Ask a supervisor to come to the table; dealing is not stopped.",
    "help.house_burn": "Announce that the house burns one card at the start of this round; "
                       "a supervisor confirms it, then one card is burned.",
    "help.confirm_house_burn": "Confirm the house burn the dealer announced: the next card "
                               "out of the shoe is burned.",
    "help.withdraw_house_burn": "The house burn announced is not made after all.",
    "help.declare_invalid": "The shoe was dealt without its burn at the start: end it as "
                            "invalid, so that a new shoe is brought in.",
    "help.reveal": "Turn the hands over: the result is shown.",
    "help.accept_software": "Let the table deal on software that is not on the approved list "
                            "(kept with your name and reason).",
    "help.unknown": "No help for this action.",
}

#: what each action's form asks for
ARGS: dict[str, Message] = {
    "arg.code": "Card", "arg.code.hint": "the card, e.g. 9H, TD, AS, 10c",
    "arg.note": "Note", "arg.note.hint": "what the others should know",
    "arg.mode": "Mode", "arg.mode.hint": "a mode of the profile, e.g. default",
    "arg.name": "Decision", "arg.name.hint": "the decision asked for",
    "arg.value": "Choice", "arg.value.hint": "draw or stand, or a seat number",
    "arg.seat": "Seat", "arg.seat.hint": "seat number",
    "arg.void": "Void the round", "arg.void.hint": "yes to void a round in progress first",
    "arg.detail": "Note", "arg.detail.hint": "what happened",
    "arg.amount": "Amount", "arg.amount.hint": "a whole number",
    "arg.profile": "Profile", "arg.profile.hint": "profile name",
    "arg.count": "How many", "arg.count.hint": "a whole number",
    "arg.limit": "How many", "arg.limit.hint": "a whole number",
    "arg.op": "Operation", "arg.op.hint": "what to do", "arg.unknown": "Value",
    "arg.unknown.hint": "a value",
}

REFUSALS: dict[str, Message] = {
    "refuse.not_now": "That cannot be done now: {state}.",
    "refuse.not_on_hold": "The table is not on hold ({state}).",
    "refuse.hold_needs_other": "{action} does not clear this hold (it is for {kind}); use "
                               "{actions}.",
    "refuse.unknown_action": "The table does not know this action.",
    "refuse.needs_reason": "Give a reason: every override is kept with why it was done.",
    "refuse.bad_value": "A value is not right for {action}.",
    "refuse.new_shoe_not_now": "A new shoe cannot start now: {state}.",
    "refuse.demo_whole_number": "Demonstration rounds must be a whole number, 0 or more.",
    "refuse.demo_too_many": "The profile allows at most {n} demonstration rounds.",
    "refuse.no_cut_card": "A continuous shuffler deals without a cut card.",
    "refuse.shuffled_not_now": "A shuffled shoe arrived when none was asked for ({state}).",
    "refuse.no_shoe_to_end": "There is no shoe in play to end ({state}).",
    "refuse.round_in_progress": "A round is in progress: finish or void it first.",
    "refuse.no_shoe": "No shoe is loaded.",
    "refuse.reveal_first": "Round {n} is not revealed yet: reveal it first.",
    "refuse.house_burn_due": "A house burn is announced: burn one card first.",
    "refuse.no_house_burn_announced": "No house burn is announced.",
    "refuse.nothing_to_reveal": "No result is waiting to be revealed.",
    "refuse.nothing_to_confirm": "There is no finished round to confirm.",
    "refuse.no_round": "No round is in progress.",
    "refuse.demo_only_at_start": "Demonstration rounds are played only when a shoe starts.",
    "refuse.mode_between_rounds": "The mode changes only between rounds.",
    "refuse.no_such_mode": "The profile has no such mode.",
    "refuse.profile_between_shoes": "The profile changes only between shoes.",
    "refuse.profile_unreadable": "That profile cannot be used; the log says why.",
    "refuse.profile_other_game": "That profile is for another game than this table deals.",
    "refuse.link_down": "The shoe's link is still down: wait for it to come back, or void the "
                        "round.",
    "refuse.reads_waiting": ("{n} card was read while the link was down: accept or discard it "
                             "first.",
                             "{n} cards were read while the link was down: accept or discard "
                             "them first."),
    "refuse.stray_first": "A card drawn when none was due is held too: give it back or burn "
                          "it first.",
    "refuse.count_mismatch": "The shuffler's count does not match: accept or reject it.",
    "refuse.check_layout": "Check the cards on the table against the record first: confirm "
                           "them, enter a card, or void the round.",
    "refuse.no_round_to_void": "There is no round in progress to void.",
    "refuse.moved_on": "That was for round {round} of shoe {shoe}, which is no longer in "
                       "play. Nothing was done: look at the table again.",
    "refuse.moved_on_table": "The table has moved on since you chose that. Nothing was done: "
                             "look at the table again.",
    "refuse.no_reads_kept": "No reads are kept under this hold.",
    "refuse.internal_error": "{action} could not be done: the controller met an error it did "
                             "not expect (the technician finds it in the log). Nothing changed.",
    "refuse.not_a_card": "That is not a card: write its rank and suit, e.g. 9H, TD, AS.",
    "refuse.card_not_in_shoe": "{card} cannot be in this shoe (every copy is already out).",
    "refuse.no_layout": "There is no round whose cards could be confirmed.",
    "refuse.count_once": "The rest of a shoe is counted once, after the shoe has ended.",
    "refuse.no_decision_due": "No decision is due now ({state}).",
    "refuse.no_such_decision": "This game takes no such decision.",
    "refuse.decision_not_due": "That decision is not due: the table waits to know {decision}.",
    "refuse.decision_too_early": "That decision is not due: the first cards are not dealt yet.",
    "refuse.decision_not_now": "That decision is not due now.",
    "refuse.rules_refuse": "The game's rules do not accept that.",
    "refuse.false_coup_stands": "False coup, corrected at once: the hand stands.",
    "refuse.false_coup_draws": "False coup, corrected at once: the hand draws.",
    "refuse.no_stakes": "This game takes no stakes at the table.",
    "refuse.bets_closed": "That is taken only while bets are open ({state}).",
    "refuse.seat_has_bank": "Seat {seat} holds the bank and cannot do that.",
    "refuse.not_the_banker": "Seat {seat} does not hold the bank (seat {banker} does).",
    "refuse.not_the_player": "Seat {seat} does not play the hand (seat {player} does).",
    "refuse.whole_number": "Give a whole number of {least} or more.",
    "refuse.no_face_up_sensor_needed": "No card has been dealt in this round yet.",
    "refuse.forbidden": "{user} has the role {role}; this needs the role {roles}.",
    "refuse.reason_required": "Give a reason: every override is kept with why it was done.",
    "refuse.arg_missing": "Give the {arg}.",
    "refuse.arg_bad": "The {arg} is not right.",
    "refuse.arg_bad_hint": "The {arg} is not right: give {hint}.",
    "refuse.locked": ("{user}'s account is locked after too many wrong PINs. It opens by itself "
                      "in {n} minute, or at once when a manager runs: tablectl users enable "
                      "{user} --as MANAGER. Then sign in again here.",
                      "{user}'s account is locked after too many wrong PINs. It opens by itself "
                      "in {n} minutes, or at once when a manager runs: tablectl users enable "
                      "{user} --as MANAGER. Then sign in again here."),
}

#: the console and the reports: labels, headings, lines
CONSOLE: dict[str, Message] = {
    "console.table": "Table {table}",
    "console.profile": "Profile {profile} ({game}, mode {mode}, {decks} decks)",
    "console.profile_one": "Profile {profile} ({game}, {decks} decks)",
    "mode.commission": "with commission", "mode.no_commission": "without commission",
    "console.state": "State",
    "console.shoe": ("Shoe {shoe}: {out} cards out, {n} round",
                     "Shoe {shoe}: {out} cards out, {n} rounds"),
    "console.cut_seen": "cut card seen (last round of the shoe)",
    "console.no_shoe": "No shoe loaded",
    "console.feed_ok": "Floor feed {broker}: up to date",
    "console.feed_behind": ("Floor feed {broker}: behind by {n} event",
                            "Floor feed {broker}: behind by {n} events"),
    "console.no_prompt": "(no prompt)",
    "console.no_round": "No round in progress.",
    "console.round": "Round {n}",
    "console.demo": "DEMONSTRATION (no bets)",
    "console.burned_before": "Burned before this round:",
    "console.next": "next",
    "console.decisions": "Decisions: {decisions}",
    "console.waiting_decision": "Waiting for a decision: {decision}",
    "console.next_card": "Next card: {step}",
    "console.next_card_after_hold": "Next card once the hold is cleared: {step}",
    "console.no_card_on_hold": "No card is taken while the table is on hold.",
    "console.all_dealt": "All cards dealt.",
    "console.hold_title": "TABLE ON HOLD: dealing is stopped until a supervisor clears it.",
    "console.problem_n": "Problem {n}: {problem}",
    "console.kept_reads": ("{n} read kept with the hold: {cards}",
                           "{n} reads kept with the hold: {cards}"),
    "console.goes_back_to": "Once cleared: {state}.",
    "console.clear_with": "To clear it, use one of:",
    "console.clear_by_resume": "Deal with the cause, then Resume.",
    "console.wait_supervisor": "Wait for a supervisor: only a supervisor clears a hold.",
    "console.asks_pin": "Every action asks for your name and PIN; overrides also for a reason.",
    "console.no_alarms": "No alarms.",
    "console.alarm_line": "{device} {alarm}: {text}",
    "console.alarm_called": "{user} calls a supervisor to the table.",
    "console.no_rounds": "No rounds yet in this shoe.",
    "console.void": "VOID",
    "console.winner.banker": "BANKER", "console.winner.player": "PLAYER",
    "console.winner.tie": "TIE", "console.winner.andar": "ANDAR",
    "console.winner.bahar": "BAHAR", "console.winner.right": "RIGHT",
    "console.winner.left": "LEFT", "console.winner.bank": "BANK",
    "console.demo_short": "(demo)",
    "console.hand.player": "PLAYER", "console.hand.banker": "BANKER",
    "console.hand.right": "RIGHT", "console.hand.left": "LEFT", "console.hand.bank": "BANK",
    "console.hand.andar": "ANDAR", "console.hand.bahar": "BAHAR",
    "console.hand.game_card": "GAME CARD",
    "console.panel.round": "Current round", "console.panel.alarms": "Alarms",
    "console.panel.history": "Last 10 rounds", "console.quit": "Quit",
    "console.panel.hold": "On hold", "console.panel.roads": "Roads",
    "console.panel.health": "Health",
    "console.no_health": "This controller reports no health view.",
    "console.no_roads": "No result yet in this shoe.",
    "console.road_empty": "empty",
    "console.road_last": ("the last {n} of {all} column", "the last {n} of {all} columns"),
    "console.not_signed_in": "Not signed in: sign in to see the table.",
    "console.signing_in": "Signing in…",
    "console.disconnected": "DISCONNECTED: no controller answers. Retrying every {seconds} s.",
    "console.no_state": "NO STATE: {why}. Retrying every {seconds} s.",
    "console.stale": "Showing the state received at {time}.",
    "console.sign_in_title": "Sign in to view the table",
    "console.sign_in_help": "The controller answers only to staff with an account. Your name "
                            "and PIN are used to read the table; every action asks for them "
                            "again.",
    "console.your_name": "Your name", "console.pin": "PIN", "console.sign_in": "Sign in",
    "console.give_name": "Give your user name.", "console.give_pin": "Give your PIN.",
    "console.needed": "This is one of the actions that clear the hold.",
    "console.reason": "Reason (kept in the journal with your name)",
    "console.reason_hint": "why you are doing this",
    "console.optional": "{label} (optional)",
    "console.key.refresh": "Refresh", "console.key.language": "Language",
    "console.send": "Send", "console.cancel": "Cancel", "console.sending": "Sending…",
    "console.wait_answer": "Sending… wait for the controller's answer.",
    "console.refused": "Refused. {why}",
    "console.done": "{what}: done.", "console.cancelled": "{what}: cancelled, nothing sent.",
    "console.state_now": "The table now: {state}.",
    "console.choose_language": "Choose the console's language",
    "console.simulator": "SIMULATOR",
    "console.condition.no_devices": "NO SHOE",
    "console.condition.software": "SOFTWARE NOT APPROVED",
    "console.condition.journal_check": "CHECKING THE JOURNAL",
    "console.entered_mark": "(entered by hand)",

}

#: a device's alarm or warning, by the controller's own code (a device's own code is shown as
#: the device gives it, with its text: only its maker names it)
ALARMS: dict[str, Message] = {
    "alarm.not_counted": "The last shoe ended without its rest counted back.",
    "alarm.reconciliation": "The shoe's cards do not reconcile with what was dealt and burned.",
    "alarm.link_lost": "The link to the {device} is lost.",
    "alarm.link_back": "The link to the {device} is back.",
    "alarm.open_failed": "The {device} cannot be opened: check its cable and power.",
    "alarm.fault": "The {device} failed to do what it was asked.",
    "alarm.unapproved_firmware": "The {device}'s firmware is not on the approved list.",
    "alarm.door_open": "The {device}'s door is open.",
    "alarm.jam": "The {device} is jammed.",
    "alarm.error": "The {device} reports an error.",
    "alarm.device": "The {device} reports {alarm}: {text}",
}

#: the readable lines of `tablectl run` (its `--json` is language-neutral)
RUN: dict[str, Message] = {
    "run.shoe_started": ("== Shoe {shoe}: profile {profile}, {n} deck, {cards} cards, the cut "
                         "card after card {cut}",
                         "== Shoe {shoe}: profile {profile}, {n} decks, {cards} cards, the cut "
                         "card after card {cut}"),
    "run.shoe_started_continuous": ("== Shoe {shoe}: profile {profile}, {n} deck, {cards} "
                                    "cards, from a continuous shuffler",
                                    "== Shoe {shoe}: profile {profile}, {n} decks, {cards} "
                                    "cards, from a continuous shuffler"),
    "run.burn": "   Burned: {shown}",
    "run.shoe_ended": ("== Shoe {shoe} ended after {n} round: {reason}",
                       "== Shoe {shoe} ended after {n} rounds: {reason}"),
    "run.resumed": "   The table goes on.",
    "run.override": "   {action} by {user} ({role}): {reason}",
    "run.cards_dealt": ("{n} card dealt", "{n} cards dealt"),
    "run.corrected": "corrected: {kinds}",
    "run.restart_no_shoe": "Resumed the journal {path} at record {seq}: no shoe in play (shoe "
                           "{shoe} is done).",
    "run.restart_shoe": "Resumed the journal {path} at record {seq}: shoe {shoe}, {state}.",
    "run.restart_round": "Resumed the journal {path} at record {seq}: shoe {shoe}, round "
                         "{round}, {state}.",
    "run.restart_hold": "Resumed the journal {path} at record {seq}: shoe {shoe}, on hold for "
                        "{kind}.",
    "run.restart_round_hold": "Resumed the journal {path} at record {seq}: shoe {shoe}, round "
                              "{round}, on hold for {kind}.",
    "run.restart_sim_closed": "The simulated shoe did not survive the restart: it is closed.",
    "run.checking_rest": "the {total} older records are checked before the first card",
    "run.checking_meanwhile": "the journal is sealed as the table left it: its {total} older "
                              "records are checked while the table deals",
    "run.log_file": "The log is written to {path} (this screen shows the table's lines only).",
}

#: what the journal records, in words (`tablectl audit` and `recall`, the floor's views)
RECORD: dict[str, Message] = {
    "record.none": "none", "record.yes": "yes", "record.no": "no",
    "record.field.cards_dealt": "cards dealt", "record.field.natural": "natural",
    "record.field.naturals": "naturals",
    "record.change": "{what}: {before} → {after}",
    "record.no_change": "no change",
    "record.field.state": "state", "record.field.round": "round", "record.field.hold": "hold",
    "record.field.hands": "cards on the table",
    "record.device.cut_card": "The shoe saw the cut card.",
    "record.device.read_failed": "The {device} could not read a card ({reason}).",
    "record.device.multiple": ("{n} card left the shoe at once.",
                               "{n} cards left the shoe together."),
    "record.device.alarm": "The {device} raised an alarm, {code}: {text}",
    "record.device.warning": "The {device} gave a warning, {code}: {text}",
    "record.device.link_lost": "The link to the {device} was lost ({reason}).",
    "record.device.link_back": "The link to the {device} is back.",
    "record.device.shuffled": "The shuffler delivered a shoe of {count} cards.",
    "record.device.identity": "The {device} is a {model}, serial {serial}, firmware "
                              "{firmware}.",
    "record.device.remainder": "The rest of the shoe was counted: {count} cards.",
    "record.device.restarted": "The controller started again.",
    "record.device.unknown": "A device event.",
    # game recall (`tablectl recall`)
    "recall.head": ("Game recall from {source}: {n} round, oldest first, in the order played",
                    "Game recall from {source}: {n} rounds, oldest first, in the order played"),
    "recall.head_asked": ("Game recall from {source}: {n} round (the last {asked} asked), oldest "
                          "first, in the order played",
                          "Game recall from {source}: {n} rounds (the last {asked} asked), "
                          "oldest first, in the order played"),
    "recall.none": "No rounds in the journal.",
    "recall.shoe": ("New shoe {shoe} started {time}: {n} deck, {cards} cards, the cut card after "
                    "{cut} cards, profile {profile} (SHA-256 {sha}…)",
                    "New shoe {shoe} started {time}: {n} decks, {cards} cards, the cut card "
                    "after {cut} cards, profile {profile} (SHA-256 {sha}…)"),
    "recall.shoe_continuous": ("New shoe {shoe} started {time}: {n} deck, {cards} cards from a "
                               "continuous shuffler, profile {profile} (SHA-256 {sha}…)",
                               "New shoe {shoe} started {time}: {n} decks, {cards} cards from "
                               "a continuous shuffler, profile {profile} (SHA-256 {sha}…)"),
    "recall.round_head": "=== Shoe {shoe}, round {round}: {status}",
    "recall.demo": "DEMONSTRATION", "recall.void": "VOID ({reason})",
    "recall.corrected": "CORRECTED", "recall.complete": "complete",
    "recall.in_progress": "IN PROGRESS (no result yet)",
    "recall.times": "Started {time} (records {first}–{last})",
    "recall.times_result": "Started {time}, result {result} (records {first}–{last})",
    "recall.times_revealed": "Started {time}, result {result}, shown to the table {revealed} "
                             "(records {first}–{last})",
    "recall.no_cards": "Cards: none read",
    "recall.cards": "Cards, in the order they left the shoe:",
    "recall.col.n": "No.", "recall.col.card": "Card", "recall.col.slot": "Dealt as",
    "recall.col.flags": "Notes", "recall.col.time": "Time",
    "recall.burned_before": "burned before the round",
    "recall.flag.entered": "entered by hand", "recall.flag.multiple": "drawn with another",
    "recall.flag.face_up": "face up", "recall.flag.with_previous": "drawn with the card before",
    "recall.flag.unknown": "noted",
    "recall.flag.house_burn": "house burn",
    "recall.house_burns": "House burn:",
    "recall.house_burn": "{card} burned for the house, announced by {user}, confirmed by {by}",
    "recall.house_burn_alone": "{card} burned for the house, announced by {user} (the "
                               "dealer alone, as the profile allows)",
    "recall.invalid_stand": ("Shoe {shoe} was declared invalid: its burn at the start was "
                             "forgotten; the result of its {n} round stands",
                             "Shoe {shoe} was declared invalid: its burn at the start was "
                             "forgotten; the results of its {n} rounds stand"),
    "recall.invalid_void": ("Shoe {shoe} was declared invalid: its burn at the start was "
                            "forgotten; its {n} round is void",
                            "Shoe {shoe} was declared invalid: its burn at the start was "
                            "forgotten; its {n} rounds are all void"),
    "recall.no_result": "Result: none yet",
    "recall.winner": "Winner: {winner}",
    "recall.bets": "Bets (net per unit staked): {bets}",
    "recall.superseded": "Superseded result ({time}, record {seq}): {winner}",
    "recall.irregularities": "Irregularities:", "recall.holds": "The table held and resumed:",
    "recall.held": "on hold: {kind}", "recall.held_plain": "on hold",
    "recall.resumed": "resumed",
    "recall.overrides": "Supervisor actions:", "recall.who": "{user} ({role}): {what}",
    "recall.reason": "reason: {reason}", "recall.commands": "Commands entered:",
    "recall.refused": "REFUSED: {why}", "recall.alarms": "Alarms:",
    "recall.device": "Device events (other than card reads):",
    "recall.shoe_ended": ("Shoe {shoe} ended after this round at {time}: {n} round, {reason}",
                          "Shoe {shoe} ended after this round at {time}: {n} rounds, {reason}"),
    # the override trail (`tablectl audit`)
    "audit.head": ("Overrides in {source}: {n} shown, oldest first, newest last",
                   "Overrides in {source}: {n} shown, oldest first, newest last"),
    "audit.head_user": ("Overrides by {user} in {source}: {n} shown, oldest first, newest last",
                        "Overrides by {user} in {source}: {n} shown, oldest first, newest last"),
    "audit.none": "No overrides in {source}.",
    "audit.none_user": "No overrides by {user} in {source}.",
    "audit.col.seq": "Record", "audit.col.args": "Given", "audit.col.change": "What changed",
}

#: why a request was refused (the control socket's answer codes)
ERRORS: dict[str, Message] = {
    "error.auth_failed": "Name or PIN not accepted",
    "error.locked": "This account is locked",
    "error.disabled": "This account is disabled",
    "error.forbidden": "Your role may not do this",
    "error.reason_required": "A reason is required",
    "error.wrong_state": "The table cannot do that now",
    "error.invalid_args": "A value is not right",
    "error.timeout": "The table did not answer in time (check the state before trying again)",
    "error.internal": "The controller failed on this request (tell the technician)",
    "error.malformed": "The controller could not read the request",
    "error.unknown_action": "The controller does not know this action",
    "error.busy": "The controller is busy (try again in a moment)",
    "error.rate_limited": "Too many failed sign-ins (wait before trying again)",
    "error.unavailable": "No controller answers",
    "error.unknown": "Refused",
}

GAMES: dict[str, Message] = {
    "game.punto_banco": "Punto Banco", "game.andar_bahar": "Andar Bahar",
    "game.chemin_de_fer": "Chemin de Fer", "game.baccarat_banque": "Baccarat en Banque",
    "game.unknown": "the game",
    "severity.error": "ERROR", "severity.warning": "WARNING", "severity.info": "NOTE",
    "severity.unknown": "NOTE",
    "void.supervisor": "by a supervisor", "void.exhausted": "the shoe ran out",
    "void.devices_lost": "the devices were lost", "void.link_lost": "reads after a lost link",
    "void.unknown": "for another reason",
    "void.invalid_shoe": "the shoe was declared invalid",
    "end.cut_card": "the cut card came out", "end.supervisor": "ended by a supervisor",
    "end.exhausted": "the shoe ran out", "end.invalid": "invalid: not an authorised game",
    "end.devices_lost": "the devices were lost", "end.link_lost": "reads after a lost link "
    "were discarded", "end.round_complete": "its round was complete", "end.unknown": "ended",
}

CARDS: dict[str, Message] = {
    "card.name": "{rank} of {suit}",
    "card.rank.A": "ace", "card.rank.J": "jack", "card.rank.Q": "queen", "card.rank.K": "king",
    "card.suit.S": "spades", "card.suit.H": "hearts", "card.suit.D": "diamonds",
    "card.suit.C": "clubs",
}

#: the web display's pages, the players' scoreboard and the dealer's page (with the console's
#: hand, winner, round and SIMULATOR words); `{n}` and `{winner}` are filled in by the page
PAGE: dict[str, Message] = {
    "page.scoreboard": "Scoreboard", "page.dealer": "Dealer",
    "page.connecting": "connecting…", "page.live": "live",
    "page.reconnecting": "reconnecting…",
    "page.shoe": "Shoe {n}",
    "page.face_down": "face down",
    "page.waiting_table": "Waiting for the table…",
    "page.on_hold": "TABLE ON HOLD",
    "page.last_result": "Last result:",
    "page.burn": "BURN",
    "page.waiting_result": "Waiting for the first result",
    "page.wins": "{winner} WINS",
    "page.bead_plate": "Bead plate", "page.big_road": "Big road",
    "page.big_eye_boy": "Big eye boy", "page.small_road": "Small road",
    "page.cockroach_pig": "Cockroach pig",
    "page.leading_ties": "ties before the first win: {n}",
    "page.ask_banker": "Ask Banker", "page.ask_player": "Ask Player",
    "page.no_mark": "no mark yet", "page.colour.red": "red", "page.colour.blue": "blue",
    "page.count.banker": "Banker", "page.count.player": "Player", "page.count.tie": "Tie",
    "page.count.andar": "Andar", "page.count.bahar": "Bahar",
    "page.count.banker_pair": "Banker pair", "page.count.player_pair": "Player pair",
    "page.count.natural": "Natural", "page.count.rounds": "Rounds",
    "page.bead.banker": "B", "page.bead.player": "P", "page.bead.tie": "T",
    "page.bead.andar": "A", "page.bead.bahar": "B",
    "page.table": "Table {table}",
    # the game as the players know it (the reports and the console name it in full)
    "page.game.punto_banco": "Punto Banco", "page.game.andar_bahar": "Andar Bahar",
    "page.game.chemin_de_fer": "Chemin de Fer", "page.game.baccarat_banque": "Baccarat en Banque",
    "page.limits": "Limits {min} – {max}", "page.limit_min": "Minimum bet {min}",
    "page.limit_max": "Maximum bet {max}",
    "page.bets_open": "PLACE YOUR BETS", "page.seconds_left": "{n} s",
    "page.hold_wait": "Please wait: the game goes on once the table is cleared.",
}

#: the shoe and shift report (`tablectl report`): headings, columns, notes and its pictures
#: (with the page's roads and counts, the console's winners and hands, kinds, problems, roles,
#: devices, actions and severities)
REPORT: dict[str, Message] = {
    "report.title": "Table report: {what}",
    "report.selection.shoe": "shoe {shoe}",
    "report.selection.latest": "the latest shoe ({shoe})",
    "report.selection.from_to": "shoes started from {start} to {end} UTC",
    "report.selection.from": "shoes started from {start} UTC",
    "report.selection.to": "shoes started before {end} UTC",
    "report.journal": "Journal {path}",
    "report.none": "None.",
    "report.shoes": "Shoes",
    "report.col.shoe": "Shoe", "report.col.game": "Game", "report.col.decks": "Decks",
    "report.col.started": "Started (UTC)", "report.col.ended": "Ended (UTC)",
    "report.col.end_reason": "Why it ended", "report.col.card_count": "Card count",
    "report.not_ended": "in progress", "report.reconciled": "reconciled",
    "report.differences": ("{n} difference", "{n} differences"),
    "report.results": "Results", "report.col.result": "Result", "report.col.share": "Share",
    "report.void_rounds": "void rounds", "report.demo_rounds": "demonstration rounds",
    "report.per_bet": "Results per bet (per unit staked on every round)",
    "report.col.bet": "Bet", "report.col.net": "Net", "report.col.mean": "Mean",
    "report.col.exact_mean": "Exact mean",
    "report.per_bet_note": "Net is the players' result per unit: a negative mean is the "
                           "house's edge at work.",
    "report.odds.not_computed": "Exact odds are not computed for {game}.",
    "report.odds.changed": "Profile {profile} has changed since the shoe was dealt; the odds "
                           "are those of today's file.",
    "report.odds.none": "No exact odds ({why}).",
    "report.outcomes": "Outcomes against the exact odds",
    "report.col.outcome": "Outcome", "report.col.exact": "Exact",
    "report.col.observed": "Observed", "report.col.interval": "95 % interval",
    "report.col.within": "Within", "report.yes": "yes", "report.no": "NO",
    "report.irregularities": "Irregularities", "report.col.time": "Time (UTC)",
    "report.col.round": "Round", "report.col.what": "What happened",
    "report.house_burns": "House burns",
    "report.holds": "Holds", "report.col.from": "From (UTC)", "report.col.why": "Why",
    "report.col.seconds": "Seconds", "report.col.cleared_by": "Cleared by",
    "report.open": "open",
    "report.holds_note": "{n} cleared, {seconds} s on hold in all.",
    "report.overrides": "Overrides", "report.col.who": "Who", "report.col.role": "Role",
    "report.col.action": "Action",
    "report.devices": "Devices", "report.col.device": "Device", "report.col.model": "Model",
    "report.col.serial": "Serial", "report.col.firmware": "Firmware",
    "report.alarms": "Device alarms", "report.col.source": "Source", "report.col.code": "Code",
    "report.col.severity": "Severity", "report.col.count": "Count",
    "report.pictures": "Roads and charts", "report.picture": "chart",
    "report.roads_title": "Shoe {shoe}: roads",
    "report.rounds_per_hour": "Rounds per hour (UTC)", "report.axis.rounds": "rounds",
    "report.hold_time": ("Hold time by cause: {n} hold, {seconds} s in all",
                         "Hold time by cause: {n} holds, {seconds} s in all"),
    "report.axis.hold_seconds": "seconds on hold", "report.no_holds": "no holds",
    "report.odds_chart": ("Results against the exact odds ({n} round; 95 % intervals)",
                          "Results against the exact odds ({n} rounds; 95 % intervals)"),
    "report.legend.observed": "observed", "report.legend.exact": "exact",
    "report.axis.share": "share of rounds",
    # bets and outcomes the page's counts and the console's hands do not name
    "report.bet.big": "Big", "report.bet.small": "Small",
    "report.bet.first_andar": "First Andar", "report.bet.first_bahar": "First Bahar",
    "report.bet.first_three": "First 3", "report.bet.cards": "{low}–{high} cards dealt",
    "report.bet.bank_right": "Bank against the right hand",
    "report.bet.bank_left": "Bank against the left hand",
    "report.outcome.banker_wins_with_6": "Banker wins with 6",
    "report.outcome.four_cards": "Four cards dealt",
    "report.outcome.five_cards": "Five cards dealt",
    "report.outcome.six_cards": "Six cards dealt",
    "report.outcome.andar_on_first_card": "Andar wins on the first card",
    "report.outcome.bahar_on_first_card": "Bahar wins on the first card",
    "report.outcome.first_three_straight_flush": "First 3: straight flush",
    "report.outcome.first_three_straight": "First 3: straight",
    "report.outcome.first_three_flush": "First 3: flush",
    # a report of several tables from the floor store
    "report.floor_title": ("Floor report: {what}, {n} table", "Floor report: {what}, {n} tables"),
    "report.tables": "Tables", "report.col.table": "Table",
    "report.store_table": "Table {table}, from the floor store {path}",
    # the first page: what the report covers
    "report.cover.game": "{game} (profile {profile})",
    "report.cover.period": "From – to (UTC)",
    "report.cover.rounds": ("{n} round ({void} void, {demo} demonstration)",
                            "{n} rounds ({void} void, {demo} demonstration)"),
    "report.cover.holds": ("{n} hold, {seconds} s on hold in all",
                           "{n} holds, {seconds} s on hold in all"),
    "report.cover.simulated": "SIMULATOR: these shoes were dealt on the simulator, not at a live "
                              "table.",
    "report.cover.source": "Records", "report.cover.written": "Written",
    "report.table_section": "Table {table}",
}

#: the pit view (`tablectl floor --web`): every table of the floor with its pace and holds, the
#: dealers of the shift and the alerts (with the games', states', kinds' and devices' words)
PIT: dict[str, Message] = {
    "pit.title": "Pit view",
    "pit.col.table": "Table", "pit.col.pit": "Pit", "pit.col.game": "Game",
    "pit.col.state": "State", "pit.col.where": "Shoe and round",
    "pit.col.last": "Last result", "pit.col.hold": "Hold", "pit.col.links": "Devices",
    "pit.col.feed": "Feed", "pit.col.status": "Connection",
    "pit.col.pace_hour": "Hands an hour, last hour", "pit.col.pace_shift": "Hands an hour, shift",
    "pit.col.hold_share": "Time on hold, shift", "pit.col.irregularities": "Irregularities, shift",
    "pit.col.dealer": "Dealer", "pit.col.tables": "Tables", "pit.col.hands": "Hands",
    "pit.online": "online", "pit.offline": "offline",
    "pit.offline_lost": "offline, connection lost", "pit.not_heard": "not heard yet",
    "pit.links_up": "all connected", "pit.link_down": "{device} disconnected",
    "pit.feed_ok": "up to date",
    "pit.feed_behind": ("{n} event behind", "{n} events behind"),
    "pit.hold_seconds": "{kind}, for {seconds} s",
    "pit.hold_minutes": ("{kind}, for {n} minute", "{kind}, for {n} minutes"),
    "pit.dealers": "Dealers this shift", "pit.alerts": "Alerts", "pit.no_alerts": "No alerts.",
    "pit.no_dealers": "No dealer has signed in this shift.",
    "pit.alert.hold": ("Table {table} has been on hold for {n} minute: {kind}.",
                       "Table {table} has been on hold for {n} minutes: {kind}."),
    "pit.alert.offline": "Table {table} is offline.",
    "pit.alert.offline_lost": "Table {table} went offline without a clean stop.",
    "pit.alert.gap": "The floor store is missing records {low} to {high} of table {table}.",
    "pit.alert.chain": "The floor store received a record of table {table} that does not "
                       "follow the one before it (record {low}).",
    "pit.alert.store": "The floor store cannot be read: {why}",
    "pit.no_store": "Hands an hour and time on hold come from the floor store, which this view "
                    "was not given.",
    "pit.shift": "Shift from {time} UTC",
    # the floor in a terminal (`tablectl floor`, `floor --once`)
    "floor.count.tables": ("{n} table", "{n} tables"),
    "floor.count.on_hold": ("{n} on hold", "{n} on hold"),
    "floor.count.offline": ("{n} stopped", "{n} stopped"),
    "floor.count.links_down": ("{n} with a device disconnected",
                               "{n} with a device disconnected"),
    "floor.count.feed_behind": ("{n} with its feed behind", "{n} with their feed behind"),
    "floor.broker_lost": "(the connection to the broker is lost: reconnecting)",
    "floor.no_tables": "No table has published to this broker yet.",
    "floor.stopped": "stopped",
    "pit.updated": "Updated {time} UTC",
}

SECTIONS = (PROMPTS, STEPS, DECISIONS, STATES, PROBLEMS, DEALER_HOLDS, KINDS, ROLES, DEVICES,
            ACTIONS, HELP, ARGS, REFUSALS, CONSOLE, ALARMS, RUN, RECORD, ERRORS, GAMES, CARDS,
            PAGE, REPORT, PIT)

MESSAGES: dict[str, Message] = {code: text for section in SECTIONS
                                for code, text in section.items()}
