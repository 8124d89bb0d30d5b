"use strict";
// The players' scoreboard: a wall display that fills its screen at any size and never
// scrolls. Every road is drawn as SVG from the server's roads JSON (/events), in cells sized
// from the space the road has: as large as its 6 rows allow, small enough that the board shows
// at least its usual number of columns, and smaller still (down to MIN_SHARE of that) while
// the shoe's columns fit. When they no longer fit, the road is shown from the first column
// that lets the newest fit, as the casino boards do.
//
// Every drawn cell carries data-road, data-col, data-row (the road's own positions, not the
// screen's) and data-winner or data-colour, so what is on the screen can be held against
// /api/roads; `window.scoreboard.layout` says, per road, the first column shown and how many
// fit. Every word is the table's language (cards.js).
(function () {
  const td = window.tableDisplay, label = td.label, num = td.num;
  const NS = "http://www.w3.org/2000/svg";
  const ROWS = 6;
  const ROADS = ["bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig"];
  // the columns a road shows at least (a casino board's), and how far below the cell size that
  // gives a road may shrink its cells to keep a long shoe whole
  const BOARD_COLS = { bead_plate: 12, big_road: 30, big_eye_boy: 20, small_road: 20, cockroach_pig: 20 };
  const MIN_SHARE = 0.5;
  const DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"];
  const COUNTS = ["banker", "player", "tie", "andar", "bahar", "banker_pair", "player_pair",
    "natural", "rounds"];
  // for tests and bench/roads.py: when each result was drawn, beside when it reached the server
  const shown = (window.scoreboard = { renders: [], data: null, layout: {} });
  let skew = 0;            // the server's clock minus ours, at the last update
  let ticking = null;

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const key in attrs) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }

  // Text too large for its box is made smaller until it fits (the box never grows).
  function fit(node) {
    node.style.fontSize = "";
    let size = parseFloat(getComputedStyle(node).fontSize);
    for (let i = 0; i < 40 && size > 4 &&
         (node.scrollWidth > node.clientWidth + 1 || node.scrollHeight > node.clientHeight + 1); i++) {
      size *= 0.92;
      node.style.fontSize = size + "px";
    }
  }

  function fitAll() {
    for (const node of document.querySelectorAll(".fit")) {
      if (node.offsetParent !== null) fit(node);
    }
  }

  function lastColumn(cells) {
    let last = -1;
    for (const c of cells) if (c.col > last) last = c.col;
    return last;
  }

  // The road's grid for `columns` columns of data: cell size, columns that fit, first shown.
  function layout(road, columns) {
    const box = document.getElementById(road).parentNode;
    const width = box.clientWidth, height = box.clientHeight;
    const byHeight = height / ROWS;
    const board = Math.min(byHeight, width / BOARD_COLS[road]);
    let size = Math.min(byHeight, width / Math.max(columns, BOARD_COLS[road]));
    // a quarter pixel's steps: the grid's lines stay where the pixels are
    size = Math.max(4, Math.floor(Math.max(size, board * MIN_SHARE) * 4) / 4);
    const fits = Math.max(1, Math.floor(width / size + 1e-6));
    return { size: size, fits: fits, first: Math.max(0, columns - fits), columns: columns,
      top: Math.max(0, Math.floor((height - ROWS * size) / 2)) };
  }

  function clear(road, cells) {
    const svg = document.getElementById(road);
    const at = layout(road, lastColumn(cells) + 1);
    const width = at.fits * at.size, height = ROWS * at.size;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.style.top = at.top + "px";
    let d = "";
    for (let c = 0; c <= at.fits; c++) d += "M" + c * at.size + " 0V" + height;
    for (let r = 0; r <= ROWS; r++) d += "M0 " + r * at.size + "H" + width;
    el("path", { d: d, class: "grid" }, svg);
    shown.layout[road] = { first: at.first, fits: at.fits, size: at.size, columns: at.columns };
    return { svg: svg, size: at.size, first: at.first,
      visible: cells.filter(function (c) { return c.col >= at.first; }) };
  }

  function cell(grid, road, c, kind, value) {
    const size = grid.size;
    const g = el("g", { "data-road": road, "data-col": c.col, "data-row": c.row,
      transform: "translate(" + ((c.col - grid.first) * size + size / 2) + "," +
        (c.row * size + size / 2) + ")" }, grid.svg);
    g.setAttribute(kind === "winner" ? "data-winner" : "data-colour", value);
    if (c.round !== undefined && c.round !== null) g.setAttribute("data-round", c.round);
    return g;
  }

  function pairs(g, c, r) {
    if (c.banker_pair) el("circle", { cx: -r * 0.72, cy: -r * 0.72, r: r * 0.24, class: "pair banker" }, g);
    if (c.player_pair) el("circle", { cx: r * 0.72, cy: r * 0.72, r: r * 0.24, class: "pair player" }, g);
  }

  // A bead's letter as large as the bead allows; a wider one (two letters, a script's
  // conjunct) made narrower until it fits inside the bead.
  function letter(g, text, r) {
    const size = r * 1.15;
    const node = el("text", { class: "letter", dy: "0.35em", "font-size": size }, g);
    node.textContent = text;
    const room = r * 1.6;
    const wide = node.getComputedTextLength();
    if (wide > room) node.setAttribute("font-size", size * room / wide);
  }

  function drawBead(cells) {
    const grid = clear("bead_plate", cells);
    const r = grid.size * 0.42;
    for (const c of grid.visible) {
      const g = cell(grid, "bead_plate", c, "winner", c.winner);
      el("circle", { r: r, class: "bead " + c.winner }, g);
      letter(g, c.winner ? label("bead." + c.winner) : "?", r);
      pairs(g, c, r);
      if (c.natural) g.setAttribute("data-natural", "true");
    }
  }

  function drawBig(big) {
    const grid = clear("big_road", big.entries);
    const r = grid.size * 0.38, stroke = Math.max(1.5, grid.size * 0.11);
    for (const c of grid.visible) {
      const g = cell(grid, "big_road", c, "winner", c.winner);
      el("circle", { r: r, class: "ring " + c.winner, "stroke-width": stroke }, g);
      if (c.ties > 0) {
        el("line", { x1: -r, y1: r, x2: r, y2: -r, class: "tie-slash", "stroke-width": stroke }, g);
        if (c.ties > 1) {
          el("text", { class: "ties", dy: "0.35em", "font-size": grid.size * 0.5 }, g).textContent =
            num(c.ties);
        }
        g.setAttribute("data-ties", c.ties);
      }
      pairs(g, c, r);
    }
    document.getElementById("leading-ties").textContent =
      big.leading_ties ? "(" + label("leading_ties", { n: num(big.leading_ties) }) + ")" : "";
  }

  // big eye boy: a hollow ring; small road: a solid dot; cockroach pig: a slash
  function mark(parent, road, colour, r, stroke) {
    if (road === "big_eye_boy") {
      return el("circle", { r: r, class: "hollow " + colour, "stroke-width": stroke }, parent);
    }
    if (road === "small_road") return el("circle", { r: r, class: "solid " + colour }, parent);
    return el("line", { x1: -r, y1: r, x2: r, y2: -r, class: "slash " + colour,
      "stroke-width": stroke }, parent);
  }

  function drawDerived(road, data) {
    const grid = clear(road, data.entries);
    const r = grid.size * 0.36, stroke = Math.max(1.5, grid.size * 0.14);
    for (const c of grid.visible) {
      mark(cell(grid, road, c, "colour", c.colour), road, c.colour, r, stroke);
    }
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
        const svg = el("svg", { viewBox: "-11 -11 22 22",
          "data-predict-road": road, "data-predict-colour": colour || "none" }, row);
        el("title", {}, svg).textContent = label(road) + ": " +
          (colour ? label("colour." + colour) : label("no_mark"));
        if (colour) mark(svg, road, colour, 7, 2.5);
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
    winner.className = "last-winner fit";
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

  function drawBar(data, roads) {
    document.getElementById("table").textContent = data.table ? label("table", { table: data.table }) : "";
    document.getElementById("game").textContent = data.game ? label("game." + data.game) : "";
    const limits = data.limits;
    let text = "";
    if (limits && limits.min && limits.max) text = label("limits", { min: num(limits.min), max: num(limits.max) });
    else if (limits && limits.min) text = label("limit_min", { min: num(limits.min) });
    else if (limits && limits.max) text = label("limit_max", { max: num(limits.max) });
    document.getElementById("limits").textContent = text;
    document.getElementById("shoe").textContent = roads.shoe === null || roads.shoe === undefined ?
      "" : label("shoe", { n: num(roads.shoe) });
  }

  // The seconds left to bet, to the server's clock; the box goes when they are over.
  function tick() {
    const data = shown.data, box = document.getElementById("betting");
    const betting = data && !data.hold ? data.betting : null;
    const left = betting ? Math.ceil(betting.closes_at - (Date.now() / 1000 + skew)) : 0;
    const open = left > 0;
    const was = !box.classList.contains("hidden");
    box.classList.toggle("hidden", !open);
    box.dataset.secondsLeft = open ? left : "";
    if (open) {
      const countdown = document.getElementById("countdown");
      const text = label("seconds_left", { n: num(left) });
      if (countdown.textContent !== text) {
        countdown.textContent = text;
        fit(box);
      }
    }
    if (open !== was) fitAll();
    if (!open && ticking !== null) {
      clearInterval(ticking);
      ticking = null;
    }
  }

  function draw(data) {
    const roads = data.roads;
    const ab = roads.game === "andar_bahar";
    document.body.classList.toggle("andar-bahar", ab);
    drawBar(data, roads);
    // on hold the players are told so, in place of the last result
    document.getElementById("hold").classList.toggle("hidden", !data.hold);
    document.getElementById("last").classList.toggle("hidden", !!data.hold);
    document.body.classList.toggle("held", !!data.hold);
    drawLast(data.last_result);
    drawCounts(roads.counts);
    drawBead(roads.bead_plate);
    if (!ab) {
      drawBig(roads.big_road);
      for (const road of DERIVED) drawDerived(road, roads[road]);
      drawPredict(roads.predict);
    }
    tick();
    if (data.betting && !data.hold && ticking === null) ticking = setInterval(tick, 250);
    fitAll();
  }

  function render(data) {
    if (typeof data.now === "number") skew = data.now - Date.now() / 1000;
    shown.data = data;
    draw(data);
    const roads = data.roads;
    shown.renders.push({ round: data.last_result ? data.last_result.round : null,
      shoe: roads.shoe, shown_at: data.shown_at, drawn_at: Date.now() / 1000 });
    if (shown.renders.length > 1000) shown.renders.shift();
  }

  // a new size or orientation (a screen rotated, a window resized): the same data drawn again
  let pending = false;
  window.addEventListener("resize", function () {
    if (pending || !shown.data) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      draw(shown.data);
    });
  });

  td.live("/events", "scoreboard", render);
})();
