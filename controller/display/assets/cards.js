"use strict";
// Shared by both pages: the page's words, card codes in symbols, the SIMULATOR ribbon, the
// live link to the server. Every word comes from the labels the server wrote into the page in
// the table's language (<script id="labels">); numbers are written as that language writes them.
window.tableDisplay = (function () {
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANKS = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };
  const source = document.getElementById("labels");
  const LABELS = source ? JSON.parse(source.textContent) : {};
  let numbers = null;
  try {
    numbers = new Intl.NumberFormat(document.documentElement.lang || "en");
  } catch (e) {
    numbers = null;
  }

  // A label, its {n} / {winner} filled in; an unknown label is its own name.
  function label(name, fields) {
    const text = name in LABELS ? LABELS[name] : name;
    if (!fields) return text;
    return text.replace(/\{(\w+)\}/g, function (whole, key) {
      return key in fields ? fields[key] : whole;
    });
  }

  function num(value) {
    if (value === null || value === undefined) return "–";
    return typeof value === "number" && numbers ? numbers.format(value) : String(value);
  }

  // What a shown result came to, in words: VOID, a winner, or each tableau's winner.
  function outcome(result) {
    if (result.void) return label("void");
    if (result.winner) return label("winner." + result.winner);
    const sides = [];
    for (const side of ["right", "left"]) {
      const w = result[side + "_winner"];
      if (w) sides.push(label("hand." + side) + ": " + label("winner." + w));
    }
    return sides.join(" · ");
  }

  function cardNode(code) {
    const span = document.createElement("span");
    if (!code) {
      span.className = "card back";
      span.textContent = "?";
      span.title = label("face_down");
      return span;
    }
    const rank = code.slice(0, -1), suit = code.slice(-1);
    span.className = "card" + (suit === "H" || suit === "D" ? " red" : "");
    span.textContent = (RANKS[rank] || rank) + (SUITS[suit] || suit);
    span.dataset.code = code;
    return span;
  }

  // The ribbon across the top of a page while the table runs on the simulator.
  function simulator(on) {
    document.getElementById("simulator").classList.toggle("hidden", !on);
  }

  // An EventSource that says whether it is live and starts again if the browser gives up.
  function live(url, kind, onData) {
    const link = document.getElementById("link");
    function connect() {
      const source = new EventSource(url);
      source.addEventListener(kind, function (message) {
        const view = JSON.parse(message.data);
        simulator(view.simulator);
        onData(view);
      });
      source.onopen = function () {
        link.textContent = label("live");
        link.className = "link up";
      };
      source.onerror = function () {
        link.textContent = label("reconnecting");
        link.className = "link down";
        if (source.readyState === EventSource.CLOSED) {
          setTimeout(connect, 2000);
        }
      };
    }
    connect();
  }

  return { cardNode: cardNode, live: live, label: label, num: num, outcome: outcome };
})();
