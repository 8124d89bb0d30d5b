"use strict";
// The pit view: every table (sortable by any underlined column, by pit first), the shift's
// dealers and the alerts, redrawn from the server's stream; every word comes from the server
// in the page's language.
(function () {
  const labels = JSON.parse(document.getElementById("labels").textContent);
  const lang = document.body.dataset.lang;
  let sortKey = "pit", down = false, last = null;
  window.pit = { data: null, renders: 0 };

  function cell(row, text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function compare(a, b) {
    const x = a.sort[sortKey], y = b.sort[sortKey];
    let c = x < y ? -1 : x > y ? 1 : 0;
    if (c === 0) c = a.sort.pit < b.sort.pit ? -1 : a.sort.pit > b.sort.pit ? 1 :
      (a.table < b.table ? -1 : a.table > b.table ? 1 : 0);
    return down ? -c : c;
  }

  function render(view) {
    last = view;
    window.pit.data = view;
    document.getElementById("shift").textContent = view.shift;
    document.getElementById("updated").textContent = view.updated;
    document.getElementById("no-store").classList.toggle("hidden", view.store);
    const body = document.querySelector("#tables tbody");
    body.textContent = "";
    for (const t of view.tables.slice().sort(compare)) {
      const tr = document.createElement("tr");
      tr.dataset.table = t.table;
      if (t.held) tr.classList.add("held");
      if (!t.online) tr.classList.add("offline");
      cell(tr, t.pit); cell(tr, t.table); cell(tr, t.game); cell(tr, t.state);
      cell(tr, t.hold, "hold"); cell(tr, t.where); cell(tr, t.last);
      cell(tr, t.pace_hour, "pace-hour"); cell(tr, t.pace_shift, "pace-shift");
      cell(tr, t.hold_share, "hold-share"); cell(tr, t.irregularities, "irregularities");
      cell(tr, t.links, t.links_down ? "warn" : ""); cell(tr, t.feed, t.behind ? "warn" : "");
      cell(tr, t.status, t.online ? "" : "warn");
      body.appendChild(tr);
    }
    const alerts = document.getElementById("alerts");
    alerts.textContent = "";
    for (const a of view.alerts) {
      const li = document.createElement("li");
      li.textContent = a.text;
      li.dataset.kind = a.kind;
      alerts.appendChild(li);
    }
    if (!view.alerts.length) {
      const li = document.createElement("li");
      li.className = "none";
      li.textContent = labels["pit.no_alerts"];
      alerts.appendChild(li);
    }
    const dealers = document.querySelector("#dealers tbody");
    dealers.textContent = "";
    for (const d of view.dealers) {
      const tr = document.createElement("tr");
      tr.dataset.dealer = d.dealer;
      cell(tr, d.dealer); cell(tr, d.tables); cell(tr, d.hands); cell(tr, d.pace);
      cell(tr, d.hold_share); cell(tr, d.irregularities);
      dealers.appendChild(tr);
    }
    document.getElementById("no-dealers").classList.toggle("hidden", view.dealers.length > 0);
    window.pit.renders += 1;
  }

  for (const th of document.querySelectorAll("th[data-sort]")) {
    th.addEventListener("click", function () {
      if (sortKey === th.dataset.sort) down = !down; else { sortKey = th.dataset.sort; down = false; }
      for (const h of document.querySelectorAll("th[data-sort]")) h.classList.remove("sorted", "down");
      th.classList.add("sorted");
      th.classList.toggle("down", down);
      if (last) render(last);
    });
  }

  const link = document.getElementById("link");
  const source = new EventSource("/events?lang=" + encodeURIComponent(lang));
  source.addEventListener("floor", function (e) { render(JSON.parse(e.data)); });
  source.onopen = function () { link.textContent = labels["page.live"]; link.className = "link up"; };
  source.onerror = function () { link.textContent = labels["page.reconnecting"]; link.className = "link down"; };
})();
