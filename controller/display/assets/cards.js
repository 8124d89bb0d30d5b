"use strict";
// Shared by both pages: card codes in words and symbols, the live link to the server.
window.tableDisplay = (function () {
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const RANKS = { T: "10", J: "J", Q: "Q", K: "K", A: "A" };

  function cardNode(code) {
    const span = document.createElement("span");
    if (!code) {
      span.className = "card back";
      span.textContent = "?";
      span.title = "face down";
      return span;
    }
    const rank = code.slice(0, -1), suit = code.slice(-1);
    span.className = "card" + (suit === "H" || suit === "D" ? " red" : "");
    span.textContent = (RANKS[rank] || rank) + (SUITS[suit] || suit);
    span.dataset.code = code;
    return span;
  }

  // An EventSource that says whether it is live and starts again if the browser gives up.
  function live(url, kind, onData) {
    const link = document.getElementById("link");
    function connect() {
      const source = new EventSource(url);
      source.addEventListener(kind, function (message) {
        onData(JSON.parse(message.data));
      });
      source.onopen = function () {
        link.textContent = "live";
        link.className = "link up";
      };
      source.onerror = function () {
        link.textContent = "reconnecting…";
        link.className = "link down";
        if (source.readyState === EventSource.CLOSED) {
          setTimeout(connect, 2000);
        }
      };
    }
    connect();
  }

  return { cardNode: cardNode, live: live };
})();
