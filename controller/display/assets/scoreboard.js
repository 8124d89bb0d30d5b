"use strict";
// The players' scoreboard: every road drawn as SVG from the server's roads JSON (/events).
// Every drawn cell carries data-road, data-col, data-row (drawn positions) and data-winner
// or data-colour, so what is on the screen can be held against /api/roads. Every word is the
// table's language (cards.js).
(function () {
  const td = window.tableDisplay, label = td.label, num = td.num;
  const NS = "http://www.w3.org/2000/svg";
  const ROWS = 6;
  const ROADS = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"];
  const CELL = { bead_plate: 34, big_road: 24, big_eye_boy: 14, small_road: 14, cockroach_pig: 14 };
  const MIN_COLS = { bead_plate: 14, big_road: 36, big_eye_boy: 36, small_road: 36, cockroach_pig: 36 };
  const DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"];
  const COUNTS = ["banker", "player", "tie", "andar", "bahar", "banker_pair", "player_pair",
    "natural", "rounds"];
  // for tests and bench/roads.py: when each result was drawn, beside when it reached the server
  const shown = (window.scoreboard = { renders: [], data: null });

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }

  function clear(svg, road, columns) {
    const size = CELL[road];
    const cols = Math.max(columns, MIN_COLS[road]);
    const width = cols * size, height = ROWS * size;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    let d = "";
    for (let c = 0; c <= cols; c++) d += "M" + c * size + " 0V" + height;
    for (let r = 0; r <= ROWS; r++) d += "M0 " + r * size + "H" + width;
    el("path", { d: d, class: "grid" }, svg);
    return size;
  }

  function cell(svg, road, c, size, kind, value) {
    const g = el("g", { "data-road": road, "data-col": c.col, "data-row": c.row,
      transform: "translate(" + (c.col * size + size / 2) + "," + (c.row * size + size / 2) + ")" }, svg);
    g.setAttribute(kind === "winner" ? "data-winner" : "data-colour", value);
    if (c.round !== undefined && c.round !== null) g.setAttribute("data-round", c.round);
    return g;
  }

  function pairs(g, c, r) {
    if (c.banker_pair) el("circle", { cx: -r * 0.72, cy: -r * 0.72, r: r * 0.24, class: "pair banker" }, g);
    if (c.player_pair) el("circle", { cx: r * 0.72, cy: r * 0.72, r: r * 0.24, class: "pair player" }, g);
  }

  function drawBead(cells) {
    const svg = document.getElementById("bead_plate");
    const size = clear(svg, "bead_plate", columnsOf(cells));
    const r = size * 0.42;
    for (const c of cells) {
      const g = cell(svg, "bead_plate", c, size, "winner", c.winner);
      el("circle", { r: r, class: "bead " + c.winner }, g);
      el("text", { class: "letter", dy: "0.35em" }, g).textContent =
        c.winner ? label("bead." + c.winner) : "?";
      pairs(g, c, r);
      if (c.natural) g.setAttribute("data-natural", "true");
    }
  }

  function drawBig(big) {
    const svg = document.getElementById("big_road");
    const size = clear(svg, "big_road", columnsOf(big.entries));
    const r = size * 0.38;
    for (const c of big.entries) {
      const g = cell(svg, "big_road", c, size, "winner", c.winner);
      el("circle", { r: r, class: "ring " + c.winner }, g);
      if (c.ties > 0) {
        el("line", { x1: -r, y1: r, x2: r, y2: -r, class: "tie-slash" }, g);
        if (c.ties > 1) el("text", { class: "ties", dy: "0.35em" }, g).textContent = num(c.ties);
        g.setAttribute("data-ties", c.ties);
      }
      pairs(g, c, r);
    }
    document.getElementById("leading-ties").textContent =
      big.leading_ties ? "(" + label("leading_ties", { n: num(big.leading_ties) }) + ")" : "";
  }

  function mark(parent, road, colour, r) {
    if (road === "big_eye_boy") return el("circle", { r: r, class: "hollow " + colour }, parent);
    if (road === "small_road") return el("circle", { r: r, class: "solid " + colour }, parent);
    return el("line", { x1: -r, y1: r, x2: r, y2: -r, class: "slash " + colour }, parent);
  }

  function drawDerived(road, data) {
    const svg = document.getElementById(road);
    const size = clear(svg, road, columnsOf(data.entries));
    for (const c of data.entries) {
      mark(cell(svg, road, c, size, "colour", c.colour), road, c.colour, size * 0.36);
    }
  }

  function columnsOf(cells) {
    let last = -1;
    for (const c of cells) if (c.col > last) last = c.col;
    return last + 1;
  }

  function drawPredict(predict) {
    const box = document.getElementById("predict");
    box.textContent = "";
    for (const winner of ["banker", "player"]) {
      const row = document.createElement("div");
      row.className = "ask " + winner;
      row.dataset.predict = winner;
      const ask = document.createElement("span");
      ask.textContent = label("ask_" + winner);
      row.appendChild(ask);
      for (const road of DERIVED) {
        const colour = predict[winner][road];
        const svg = el("svg", { width: 22, height: 22, viewBox: "-11 -11 22 22",
          "data-predict-road": road, "data-predict-colour": colour || "none" }, row);
        el("title", {}, svg).textContent = label(road) + ": " +
          (colour ? label("colour." + colour) : label("no_mark"));
        if (colour) mark(svg, road, colour, 7);
        else el("text", { class: "none", dy: "0.35em" }, svg).textContent = "–";
      }
      box.appendChild(row);
    }
  }

  function drawCounts(counts) {
    const box = document.getElementById("counts");
    box.textContent = "";
    for (const key of COUNTS) {
      if (!(key in counts)) continue;
      const chip = document.createElement("span");
      chip.className = "count " + key;
      chip.dataset.count = key;
      chip.textContent = label("count." + key) + " " + num(counts[key]);
      box.appendChild(chip);
    }
  }

  function hand(name, cards, total) {
    const span = document.createElement("span");
    span.className = "hand";
    span.appendChild(document.createTextNode(label("hand." + name) + " "));
    for (const code of cards || []) span.appendChild(td.cardNode(code));
    if (total !== undefined && total !== null) span.appendChild(document.createTextNode(" = " + num(total)));
    return span;
  }

  function drawLast(result) {
    const winner = document.getElementById("last-winner");
    const hands = document.getElementById("last-hands");
    hands.textContent = "";
    winner.className = "last-winner";
    if (!result) {
      winner.textContent = label("waiting_result");
      return;
    }
    winner.dataset.round = result.round;
    if (result.void) {
      winner.textContent = label("round", { n: num(result.round) }) + ": " + td.outcome(result);
      return;
    }
    let who = result.winner;
    if (result.game === "baccarat_banque") {
      who = null;
      winner.textContent = td.outcome(result);
    } else {
      winner.textContent = who === "tie" || !who ? td.outcome(result) :
        label("wins", { winner: label("winner." + who) });
      if (who) winner.classList.add(who);
    }
    winner.dataset.winner = who || "";
    if (result.game === "andar_bahar") {
      hands.appendChild(hand("game_card", [result.game_card]));
      hands.appendChild(hand("andar", result.andar));
      hands.appendChild(hand("bahar", result.bahar));
    } else if (result.game === "baccarat_banque") {
      for (const h of ["right", "left", "bank"]) hands.appendChild(hand(h, result[h], result[h + "_total"]));
    } else {
      hands.appendChild(hand("player", result.player, result.player_total));
      hands.appendChild(hand("banker", result.banker, result.banker_total));
    }
  }

  function render(data) {
    const roads = data.roads;
    const ab = roads.game === "andar_bahar";
    document.body.classList.toggle("andar-bahar", ab);
    document.getElementById("shoe").textContent = label("shoe", { n: num(roads.shoe) });
    drawLast(data.last_result);
    drawCounts(roads.counts);
    drawBead(roads.bead_plate);
    if (!ab) {
      drawBig(roads.big_road);
      for (const road of DERIVED) drawDerived(road, roads[road]);
      drawPredict(roads.predict);
    } else {
      for (const road of ROADS.slice(1)) clear(document.getElementById(road), road, 0);
    }
    for (const box of document.querySelectorAll(".scroll")) box.scrollLeft = box.scrollWidth;
    shown.data = data;
    shown.renders.push({ round: data.last_result ? data.last_result.round : null,
      shoe: roads.shoe, shown_at: data.shown_at, drawn_at: Date.now() / 1000 });
    if (shown.renders.length > 1000) shown.renders.shift();
  }

  td.live("/events", "scoreboard", render);
})();
