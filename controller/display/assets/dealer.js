"use strict";
// The dealer's page: the prompt in large type (on hold, the hold in plain words, as the server
// words it), the round's cards (face down until revealed when the profile reveals on the
// dealer's word), the last result. Every word is the table's language (cards.js).
(function () {
  const td = window.tableDisplay, label = td.label, num = td.num;
  const HANDS = ["burn", "game_card", "player", "banker", "andar", "bahar", "right", "left", "bank"];

  function render(view) {
    document.getElementById("where").textContent = label("shoe", { n: num(view.shoe) }) +
      (view.round === null ? "" : " · " + label("round", { n: num(view.round) }));
    const hold = document.getElementById("hold");
    hold.textContent = view.hold ? label("on_hold") : "";
    hold.classList.toggle("hidden", !view.hold);
    const prompt = document.getElementById("prompt");
    prompt.textContent = view.prompt || view.hold || "";
    prompt.classList.toggle("held", !!view.hold);
    const box = document.getElementById("hands");
    box.textContent = "";
    for (const name of HANDS) {
      const cards = view.cards.filter(function (c) { return c.hand === name; });
      if (!cards.length) continue;
      const row = document.createElement("div");
      row.className = "hand-row";
      row.dataset.hand = name;
      const title = document.createElement("span");
      title.className = "hand-name";
      title.textContent = label("hand." + name);
      row.appendChild(title);
      for (const c of cards) row.appendChild(td.cardNode(c.code));
      box.appendChild(row);
    }
    const last = view.last_result;
    document.getElementById("last").textContent = !last ? "–" :
      label("round", { n: num(last.round) }) + ": " + td.outcome(last) +
        (!last.void && last.player_total !== undefined ?
          " (" + num(last.player_total) + "–" + num(last.banker_total) + ")" : "");
  }

  td.live("/dealer/events", "dealer", render);
})();
