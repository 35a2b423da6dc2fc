// toolgate dashboard: plain JavaScript, no build step. It polls the HTTP
// API and redraws; every number shown comes from the API as is.
"use strict";
(function () {
  const $ = (sel) => document.querySelector(sel);
  const state = { key: localStorage.getItem("toolgate.key") || "", charts: {}, tools: [], timer: null };
  const REFRESH_MS = 5000;

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k);
    return e;
  }

  async function api(path, opts) {
    const headers = { "Accept": "application/json" };
    if (state.key) headers["Authorization"] = "Bearer " + state.key;
    if (opts && opts.body) headers["Content-Type"] = "application/json";
    const resp = await fetch(path, Object.assign({ headers }, opts || {}));
    if (resp.status === 401) {
      $("#keyform").hidden = false;
      throw new Error("this toolgate needs an API key");
    }
    const body = await resp.json().catch(() => null);
    if (!resp.ok) {
      const msg = body && body.error ? body.error.message : resp.statusText;
      const err = new Error(msg);
      err.status = resp.status;
      throw err;
    }
    return body;
  }

  const ms = (v) => v == null ? "–" : v >= 1000 ? (v / 1000).toFixed(v >= 10000 ? 0 : 1) + " s" : Math.round(v) + " ms";
  const pct = (v) => v == null ? "–" : (v * 100).toFixed(v < 0.1 ? 1 : 0) + "%";
  const when = (t) => t ? new Date(t).toLocaleTimeString() : "";

  function pressureText(name, f) {
    if (!f.timeout_pressure) return null;
    const sugg = f.suggested_timeout_ms ? ` Raise the read timeout to about ${ms(f.suggested_timeout_ms)}, or find out why it is slow.` : "";
    return `${name} is close to timing out: p95 is ${ms(f.p95_ms)} against a ${ms(f.timeout_ms)} read timeout, ` +
      `so about 1 call in 20 comes within ${ms(Math.max(0, f.timeout_ms - f.p95_ms))} of it.${sugg}`;
  }

  function renderAlerts(alerts) {
    const box = $("#alerts");
    box.replaceChildren();
    for (const a of alerts) {
      box.append(el("div", { class: "alert " + a.kind, role: "alert" },
        el("span", { class: "kind", text: a.kind.replace(/_/g, " ") }), a.message));
    }
  }

  function toolCard(name, f, cfg) {
    const card = el("article", { class: "card", "data-tool": name });
    card.append(el("h3", { text: name }));
    card.append(el("div", { class: "sub", text: [cfg && cfg.effect, f.dependency && ("on " + f.dependency)].filter(Boolean).join(" · ") }));
    const figs = el("div", { class: "figs" });
    const fig = (label, value) => figs.append(el("div", {}, el("b", { text: value }), label));
    fig("calls", String(f.calls));
    // Refusals (nothing sent) apart from the dependency's failures.
    fig("refused", String(f.refused || 0));
    fig("dependency errors", pct(f.dependency_error_rate));
    fig("retried", pct(f.retry_rate));
    fig("timeout", f.timeout_ms ? ms(f.timeout_ms) : "–");
    fig("p50", ms(f.p50_ms));
    fig("p95", ms(f.p95_ms));
    fig("p99", ms(f.p99_ms));
    fig("samples", String(f.samples || 0));
    fig("suggested timeout", f.suggested_timeout_ms ? ms(f.suggested_timeout_ms) : (f.suggested_timeout_note || "–"));
    card.append(figs);
    const warn = pressureText(name, f);
    if (warn) card.append(el("p", { class: "pressure", role: "status", text: warn }));
    card.append(el("div", { class: "chart", id: "chart-" + name, "aria-label": `${name}: p50, p95 and p99 latency (nearest rank over the calls that reached the dependency, as the figures above) against the timeout` }));
    return card;
  }

  async function drawChart(name, window) {
    const host = document.getElementById("chart-" + name);
    if (!host || typeof uPlot === "undefined") return;
    const s = await api(`/v1/stats/series?tool=${encodeURIComponent(name)}&window=${window}`);
    const pts = s.points || [];
    const span = { "15m": 900, "1h": 3600, "24h": 86400 }[window] || 3600;
    const step = seconds(s.step) || 60;
    const last = pts.length ? new Date(pts[pts.length - 1].start).getTime() / 1000 + step : Date.now() / 1000;
    // Zoom to the data when it fills only part of the window: from one step
    // before the first point, and at least five steps wide, never wider than
    // the window.
    let first = last - span;
    if (pts.length) {
      const start = new Date(pts[0].start).getTime() / 1000;
      first = Math.max(last - span, Math.min(start - step, last - 5 * step));
    }
    // The two ends carry only the timeout, so its line spans the chart.
    const xs = [first, ...pts.map((p) => new Date(p.start).getTime() / 1000), last];
    // A step whose calls were all refused has no latency: no point, not 0 ms.
    const pick = (f) => [null, ...pts.map((p) => p.samples ? p[f] : null), null];
    const series = [xs, pick("p50_ms"), pick("p95_ms"), pick("p99_ms"), xs.map(() => s.timeout_ms || null)];
    if (state.charts[name]) state.charts[name].destroy();
    host.replaceChildren();
    const width = Math.max(300, host.clientWidth || 380);
    state.charts[name] = new uPlot({
      width, height: 170,
      // The span drawn, for the browser test.
      hooks: { setScale: [(u, key) => {
        if (key === "x") { host.dataset.xMin = String(u.scales.x.min); host.dataset.xMax = String(u.scales.x.max); }
      }] },
      scales: { x: { time: true, range: () => [first, last] },
        y: { range: (u, min, max) => [0, Math.max(max || 0, (s.timeout_ms || 0) * 1.1, 10)] } },
      axes: [{}, { values: (u, vals) => vals.map((v) => ms(v)), size: 60 }],
      series: [{},
        { label: "p50", stroke: "#0072B2", width: 2, points: { show: true } },
        { label: "p95", stroke: "#E69F00", width: 2, points: { show: true } },
        { label: "p99", stroke: "#CC79A7", width: 2, points: { show: true } },
        { label: "timeout", stroke: "#D55E00", width: 2, dash: [6, 4] }],
    }, series, host);
    host.title = first > last - span ? `zoomed to the data: the last ${dur(last - first)} of the ${window} window` : `the ${window} window`;
  }

  // seconds reads a step such as "10s", "1m", "1m30s", "2h" or "1d".
  function seconds(text) {
    const unit = { d: 86400, h: 3600, m: 60, s: 1 };
    let total = 0;
    for (const [, n, u] of String(text || "").matchAll(/([0-9.]+)([dhms])/g)) total += parseFloat(n) * unit[u];
    return total;
  }

  // dur writes a number of seconds as people read it: "90 s", "12 min", "3 h".
  const dur = (s) => s < 120 ? Math.round(s) + " s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h";

  function renderDeps(deps, breakers) {
    const body = $("#deps tbody");
    body.replaceChildren();
    const names = new Set([...Object.keys(deps || {}), ...breakers.map((b) => b.dependency)]);
    if (names.size === 0) { body.append(el("tr", {}, el("td", { colspan: "6", class: "empty", text: "No dependency has been called yet." }))); return; }
    for (const n of [...names].sort()) {
      const f = (deps || {})[n] || {};
      const b = breakers.find((x) => x.dependency === n);
      let breaker = "closed (not tried yet)";
      if (b) breaker = b.state === "open" ? `open: ${b.consecutive_failures} failures in a row, next try in ${ms(b.retry_in_ms)}`
        : b.state === "half_open" ? "half-open: one probe allowed" : "closed";
      body.append(el("tr", {}, el("td", { text: n }),
        el("td", {}, el("span", { class: "badge state-" + (b ? b.state : "closed"), text: breaker })),
        el("td", { class: "num", text: f.calls != null ? String(f.calls) : "0" }),
        el("td", { class: "num", text: f.refused != null ? String(f.refused) : "0" }),
        el("td", { class: "num", text: pct(f.dependency_error_rate) }), el("td", { class: "num", text: ms(f.p95_ms) })));
    }
  }

  function renderApprovals(list) {
    const box = $("#approvals");
    box.replaceChildren();
    if (!list) { box.append(el("p", { class: "empty", text: "This store does not keep approvals." })); return; }
    if (list.length === 0) { box.append(el("p", { class: "empty", text: "Nothing is waiting." })); return; }
    for (const a of list) {
      const decide = async (decision) => {
        const by = prompt(`Your name, recorded with the decision to ${decision} ${a.id}:`);
        if (!by) return;
        await api(`/v1/approvals/${encodeURIComponent(a.id)}`, { method: "POST", body: JSON.stringify({ decision, by }) });
        refresh();
      };
      box.append(el("div", { class: "approval" },
        el("b", { text: a.tool }), ` for ${a.principal_id} (run `, runLink(a.run_id), `): `, el("code", { text: JSON.stringify(a.args) }),
        el("div", { class: "sub", text: `${a.reason} Asked ${when(a.created_at)}; expires ${new Date(a.expires_at).toLocaleString()}.` }),
        el("button", { type: "button", class: "approve", onclick: () => decide("approve"), text: "Approve" }),
        el("button", { type: "button", class: "deny", onclick: () => decide("deny"), text: "Deny" })));
    }
  }

  function renderQuotas(list) {
    const body = $("#quotas tbody");
    body.replaceChildren();
    if (!list) { body.append(el("tr", {}, el("td", { colspan: "7", class: "empty", text: "Only an operator key (approver) sees quotas." }))); return; }
    if (list.length === 0) { body.append(el("tr", {}, el("td", { colspan: "7", class: "empty", text: "No quota is in use." }))); return; }
    for (const q of list) {
      body.append(el("tr", {},
        el("td", { text: q.quota }), el("td", { text: q.key }),
        el("td", { class: "num", text: String(q.used) }), el("td", { class: "num", text: String(q.limit) }),
        el("td", {}, el("span", { class: "badge " + (q.left > 0 ? "ok" : "bad"), text: String(q.left) })),
        el("td", { text: q.window }), el("td", { text: new Date(q.next_free_at).toLocaleString() })));
    }
  }

  function runLink(id) {
    return el("button", { class: "run", type: "button", "data-run": id, onclick: () => openRun(id), text: id });
  }

  function renderExecs(rows) {
    const body = $("#execs tbody");
    body.replaceChildren();
    const code = $("#f-code").value;
    rows = rows.filter((r) => code === "" || (code === "ok" ? r.ok : !r.ok));
    if (rows.length === 0) { body.append(el("tr", {}, el("td", { colspan: "8", class: "empty", text: "No executions match." }))); return; }
    for (const r of rows) {
      body.append(el("tr", {},
        el("td", { text: when(r.finished_at) }), el("td", {}, runLink(r.run_id)), el("td", { class: "num", text: String(r.step) }),
        el("td", { text: r.tool }),
        el("td", {}, el("span", { class: "badge " + (r.ok ? "ok" : "bad"), text: r.code })),
        el("td", { text: r.side_effect }), el("td", { class: "num", text: String(r.attempts) }),
        el("td", { class: "num", text: ms(r.latency_ms) })));
    }
  }

  async function openRun(id) {
    const dlg = $("#runview");
    $("#run-h").textContent = "Run " + id;
    $("#timeline").replaceChildren(el("li", { text: "loading…" }));
    if (!dlg.open) dlg.showModal();
    try {
      const run = await api(`/v1/runs/${encodeURIComponent(id)}`);
      $("#run-meta").textContent = `Principal ${run.principal && run.principal.id} · ${run.step} step(s)`;
      const tl = $("#timeline");
      tl.replaceChildren();
      for (const h of run.history || []) {
        tl.append(el("li", { class: h.ok ? "ok" : "fail" },
          el("b", { text: `${h.step}. ${h.tool} ` }), el("span", { class: "badge " + (h.ok ? "ok" : "bad"), text: h.code }),
          ` ${ms(h.latency_ms)}, ${h.attempts} attempt(s), side effect ${h.side_effect}${h.replayed ? ", replayed" : ""}${h.verified ? ", verified" : ""}`,
          el("div", { class: "obs", text: h.observation || "" })));
      }
      if (!tl.children.length) tl.append(el("li", { class: "empty", text: "No calls yet." }));
      $("#run-state").textContent = JSON.stringify(run.state, null, 2);
      const rep = await api(`/v1/runs/${encodeURIComponent(id)}/replay`);
      $("#run-replay").replaceChildren(el("span", { class: "badge " + (rep.matches ? "ok" : "bad"),
        text: rep.matches ? "replay matches: the log rebuilds this state" : "replay does NOT match the stored state" }));
    } catch (e) {
      $("#timeline").replaceChildren(el("li", { class: "fail", text: e.message }));
    }
  }

  async function refresh() {
    const window = $("#window").value;
    try {
      const [stats, alerts, breakers, tools] = await Promise.all([
        api("/v1/stats?window=" + window), api("/v1/alerts"), api("/v1/breakers").catch(() => ({ breakers: [] })),
        state.tools.length ? Promise.resolve(null) : api("/v1/tools?scope=all").catch(() => api("/v1/tools"))]);
      if (tools) {
        state.tools = tools.tools || [];
        const sel = $("#f-tool");
        for (const t of state.tools) sel.append(el("option", { value: t.name, text: t.name }));
      }
      renderAlerts(alerts.alerts || []);
      const box = $("#tools");
      box.replaceChildren();
      for (const t of state.tools) {
        const f = (stats.tools || {})[t.name] || { calls: 0, codes: {} };
        box.append(toolCard(t.name, f, t));
      }
      await Promise.all(state.tools.map((t) => drawChart(t.name, window).catch(() => {})));
      renderDeps(stats.dependencies, breakers.breakers || []);
      const appr = await api("/v1/approvals?status=pending").then((a) => a.approvals || []).catch(() => null);
      renderApprovals(appr);
      const quotas = await api("/v1/quotas").then((a) => a.quotas || []).catch(() => null);
      renderQuotas(quotas);
      const q = new URLSearchParams({ limit: "50" });
      if ($("#f-tool").value) q.set("tool", $("#f-tool").value);
      if ($("#f-run").value.trim()) q.set("run", $("#f-run").value.trim());
      const ex = await api("/v1/executions?" + q).catch(() => ({ executions: [] }));
      renderExecs(ex.executions || []);
      $("#live").textContent = "live · updated " + new Date().toLocaleTimeString();
    } catch (e) {
      $("#live").textContent = "not updated: " + e.message;
    }
  }

  $("#keyform").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.key = $("#key").value.trim();
    localStorage.setItem("toolgate.key", state.key);
    $("#keyform").hidden = true;
    refresh();
  });
  $("#window").addEventListener("change", refresh);
  $("#filters").addEventListener("change", refresh);
  $("#filters").addEventListener("submit", (ev) => { ev.preventDefault(); refresh(); });
  refresh();
  state.timer = setInterval(refresh, REFRESH_MS);
})();
