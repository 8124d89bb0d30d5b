"use strict";
// The dealer's page: the prompt in large type, a hold in plain words, the round's cards (face
// down until revealed when the profile reveals on the dealer's word), the last result.
(function () {
  const HANDS = ["burn", "game_card", "player", "banker", "andar", "bahar", "right", "left", "bank"];
  const NAMES = { burn: "Burn", game_card: "Game card", player: "Player", banker: "Banker",
    andar: "Andar", bahar: "Bahar", right: "Right", left: "Left", bank: "Bank" };

  function render(view) {
    document.getElementById("where").textContent = "Shoe " + (view.shoe === null ? "–" : view.shoe) +
      (view.round === null ? "" : " · Round " + view.round);
    const hold = document.getElementById("hold");
    hold.textContent = view.hold ? "HOLD — " + view.hold : "";
    hold.classList.toggle("hidden", !view.hold);
    const prompt = document.getElementById("prompt");
    prompt.textContent = view.hold ? "Stop: wait for the supervisor" : (view.prompt || "");
    prompt.classList.toggle("held", !!view.hold);
    const box = document.getElementById("hands");
    box.textContent = "";
    for (const name of HANDS) {
      const cards = view.cards.filter(function (c) { return c.hand === name; });
      if (!cards.length) continue;
      const row = document.createElement("div");
      row.className = "hand-row";
      row.dataset.hand = name;
      const label = document.createElement("span");
      label.className = "hand-name";
      label.textContent = NAMES[name] || name;
      row.appendChild(label);
      for (const c of cards) row.appendChild(window.tableDisplay.cardNode(c.code));
      box.appendChild(row);
    }
    const last = view.last_result;
    document.getElementById("last").textContent = !last ? "–" : "Round " + last.round + ": " +
      (last.void ? "void" : (last.winner || "").toUpperCase() +
        (last.player_total !== undefined ? " (" + last.player_total + "–" + last.banker_total + ")" : ""));
  }

  window.tableDisplay.live("/dealer/events", "dealer", render);
})();
