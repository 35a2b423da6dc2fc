// toolgate console, the overview: headline figures for the window, then
// each tool and each dependency, refusals by toolgate apart from the
// dependency's failures (a call refused before any attempt is neither a
// latency sample nor a dependency error).
"use strict";
(function (tg) {
  const { $, el, ms, pct, count } = tg;
  const charts = {};
  let tools = null;

  function headline(sum, stats) {
    const box = $("#headline");
    if (!sum) {
      box.replaceChildren(tg.empty("The headline figures could not be read."));
      return;
    }
    const tile = (label, value, note, warn, href) => {
      const body = [el("b", { text: value }), el("span", { text: label })];
      if (note) body.push(el("small", { text: note }));
      return href ? el("a", { class: "tile" + (warn ? " warn" : ""), href, "data-nav": "" }, ...body)
        : el("div", { class: "tile" + (warn ? " warn" : "") }, ...body);
    };
    const refused = Object.values(stats.tools || {}).reduce((n, f) => n + (f.refused || 0), 0);
    const depFailed = Object.values(stats.tools || {}).reduce((n, f) => n + (f.dependency_errors || 0), 0);
    const capped = sum.capped ? "the newest 10,000" : null;
    box.replaceChildren(
      tile("calls", count(sum.calls), capped || `${count(refused)} refused by toolgate, ${count(depFailed)} failed at the dependency`),
      tile("effects committed", count(sum.effects_committed), capped || "writes that took effect, replays not counted"),
      tile("unknown outcomes waiting", count(sum.unknown_outcomes), "writes to verify or repeat", sum.unknown_outcomes > 0),
      tile("approvals waiting", sum.approvals_waiting < 0 ? "not kept" : count(sum.approvals_waiting), "for a person to decide", sum.approvals_waiting > 0),
      tile("breakers open", count(sum.breakers_open), "dependencies toolgate stopped calling", sum.breakers_open > 0));
  }

  // renderAlerts lists the alerts, but a tool's timeout pressure only once:
  // in its card, in the card's own figures (the alert reads the last hour).
  function renderAlerts(alerts, stats) {
    const inCard = (a) => a.kind === "timeout_pressure" && a.tool && ((stats.tools || {})[a.tool] || {}).timeout_pressure;
    $("#alerts").replaceChildren(...alerts.filter((a) => !inCard(a)).map((a) => el("div", { class: "alert " + a.kind, role: "alert" },
      el("span", { class: "kind", text: a.kind.replace(/_/g, " ") }), a.message)));
  }

  // pressureText says how close a tool runs to its read timeout, in words.
  function pressureText(name, f) {
    if (!f.timeout_pressure || !f.timeout_ms) return null;
    const gap = f.timeout_ms - f.p95_ms;
    const where = gap >= 1 ? `about 1 call in 20 comes within ${ms(gap)} of it` : "at least 1 call in 20 takes the whole timeout";
    const sugg = f.suggested_timeout_ms ? ` Raise the read timeout to about ${ms(f.suggested_timeout_ms)}, or find out why it is slow.` : "";
    return `${name} is close to timing out: p95 is ${ms(f.p95_ms)} against a ${ms(f.timeout_ms)} read timeout, so ${where}.${sugg}`;
  }

  function toolCard(t, f, series) {
    const timeout = f.timeout_ms || series.timeout_ms || 0;
    const card = el("article", { class: "card", "data-tool": t.name });
    card.append(el("h3", { text: t.name }),
      el("div", { class: "sub", text: [t.effect, f.dependency && "on " + f.dependency, timeout && "read timeout " + ms(timeout)].filter(Boolean).join(" · ") }));
    if (!f.calls) {
      card.append(tg.empty("No calls in this window."));
      return card;
    }
    const figs = el("div", { class: "figs" });
    const fig = (label, value, title) => figs.append(el("div", { title }, el("b", { text: value }), label));
    fig("calls", count(f.calls));
    fig("refused by toolgate", count(f.refused), "refused before any attempt: validation, permission, rule, approval, quota");
    fig("failed at dependency", `${count(f.dependency_errors)} (${pct(f.dependency_error_rate)})`, "of the calls that reached the dependency");
    fig("retried", pct(f.retry_rate));
    if (f.samples) {
      fig("p50", ms(f.p50_ms));
      fig("p95", ms(f.p95_ms));
      fig("p99", ms(f.p99_ms));
      fig("suggested timeout", f.suggested_timeout_ms ? ms(f.suggested_timeout_ms) : "not yet", f.suggested_timeout_note || "");
    }
    card.append(figs);
    const warn = pressureText(t.name, f);
    if (warn) card.append(el("p", { class: "pressure", role: "status", text: warn }));
    if (!f.samples) {
      card.append(tg.empty("Every call was refused before reaching the dependency: no latency to draw."));
      return card;
    }
    card.append(el("div", { class: "chart", id: "chart-" + t.name, role: "img",
      "aria-label": `${t.name}: p50, p95 and p99 latency per step of the window (nearest rank over the calls that reached the dependency, as the figures above)` }));
    card.append(legend(series, timeout));
    return card;
  }

  // legend is the chart's key, drawn by the page (uPlot's own legend shows
  // "--" for an empty point and wraps on a narrow card).
  function legend(series, timeout) {
    const item = (cls, text) => el("span", {}, el("i", { class: "swatch " + cls }), text);
    const box = el("div", { class: "legend" }, item("p50", "p50"), item("p95", "p95"), item("p99", "p99"));
    if (timeout) box.append(series.timeoutShown ? item("timeout", "read timeout " + ms(timeout)) : el("span", { class: "note", text: `read timeout ${ms(timeout)}, above the scale` }));
    return box;
  }

  // seconds reads a step such as "10s", "1m", "1m30s", "2h" or "1d".
  function seconds(text) {
    const unit = { d: 86400, h: 3600, m: 60, s: 1 };
    let total = 0;
    for (const [, n, u] of String(text || "").matchAll(/([0-9.]+)([dhms])/g)) total += parseFloat(n) * unit[u];
    return total;
  }

  // plan works out what a tool's chart spans: from one step before the
  // first point, at least five steps wide, never wider than the window;
  // the y axis fits the data, with the timeout drawn only when it is
  // within three times the slowest point (else the data would be a flat
  // line at the bottom).
  function plan(s, window) {
    const pts = (s.points || []).filter((p) => p.samples);
    const span = { "15m": 900, "1h": 3600, "24h": 86400 }[window] || 3600;
    const step = seconds(s.step) || 60;
    const at = (p) => new Date(p.start).getTime() / 1000;
    const last = pts.length ? at(pts[pts.length - 1]) + step : Date.now() / 1000;
    let first = last - span;
    if (pts.length) first = Math.max(last - span, Math.min(at(pts[0]) - step, last - 5 * step));
    const top = Math.max(10, ...pts.map((p) => p.p99_ms || 0));
    s.timeoutShown = !!s.timeout_ms && s.timeout_ms <= top * 3;
    return { pts, first, last, span, at, yMax: Math.max(top, s.timeoutShown ? s.timeout_ms : 0) * 1.1 };
  }

  function drawChart(name, s, window) {
    const host = document.getElementById("chart-" + name);
    if (!host || typeof uPlot === "undefined") return;
    const p = plan(s, window);
    // The two ends carry only the timeout, so its line spans the chart.
    const xs = [p.first, ...p.pts.map(p.at), p.last];
    const pick = (f) => [null, ...p.pts.map((x) => x[f]), null];
    const data = [xs, pick("p50_ms"), pick("p95_ms"), pick("p99_ms"), xs.map(() => s.timeoutShown ? s.timeout_ms : null)];
    if (charts[name]) charts[name].destroy();
    host.replaceChildren();
    const width = Math.max(240, host.clientWidth || 360);
    charts[name] = new uPlot({
      width, height: 160, legend: { show: false }, cursor: { show: false },
      hooks: { setScale: [(u, key) => {
        if (key === "x") { host.dataset.xMin = String(u.scales.x.min); host.dataset.xMax = String(u.scales.x.max); }
      }] },
      scales: { x: { time: true, range: () => [p.first, p.last] }, y: { range: () => [0, p.yMax] } },
      axes: [{ size: 30 }, { values: (u, vals) => vals.map((v) => ms(v)), size: 70 }],
      series: [{},
        { stroke: "#0072B2", width: 2, points: { show: true } },
        { stroke: "#E69F00", width: 2, points: { show: true } },
        { stroke: "#CC79A7", width: 2, points: { show: true } },
        { stroke: "#D55E00", width: 2, dash: [6, 4], points: { show: false } }],
    }, data, host);
    host.title = p.first > p.last - p.span ? `zoomed to the data: the last ${tg.dur(p.last - p.first)} of the ${window} window` : `the ${window} window`;
  }

  function renderDeps(deps, breakers) {
    const body = $("#deps tbody");
    const names = [...new Set([...Object.keys(deps || {}), ...breakers.map((b) => b.dependency)])].sort();
    if (!names.length) { body.replaceChildren(el("tr", {}, el("td", { colspan: "6", class: "empty", text: "No dependency has been called yet." }))); return; }
    body.replaceChildren(...names.map((n) => {
      const f = (deps || {})[n] || {};
      const b = breakers.find((x) => x.dependency === n);
      let breaker = "closed (not tried yet)";
      if (b) breaker = b.state === "open" ? `open: ${b.consecutive_failures} failures in a row, next try in ${ms(b.retry_in_ms)}`
        : b.state === "half_open" ? "half-open: one probe allowed" : "closed";
      return el("tr", { "data-dependency": n }, el("td", { text: n }),
        el("td", {}, el("span", { class: "badge state-" + (b ? b.state : "closed"), text: breaker })),
        el("td", { class: "num", text: count(f.calls) }),
        el("td", { class: "num", text: count(f.refused) }),
        el("td", { class: "num", text: `${count(f.dependency_errors)} (${pct(f.dependency_error_rate)})` }),
        el("td", { class: "num", text: f.samples ? ms(f.p95_ms) : "no calls reached it" }));
    }));
  }

  let shownApprovals = null;
  function renderApprovals(list) {
    const box = $("#approvals");
    // Redrawn only when the list changed, so that a refresh does not take
    // the keyboard's focus off an Approve or Deny button.
    const key = JSON.stringify(list && list.map((a) => a.id));
    if (key === shownApprovals && box.children.length) return;
    shownApprovals = key;
    if (!list) { box.replaceChildren(tg.empty("This store does not keep approvals.")); return; }
    if (!list.length) { box.replaceChildren(tg.empty("Nothing is waiting.")); return; }
    box.replaceChildren(...list.map((a) => {
      const decide = async (decision) => {
        const by = prompt(`Your name, recorded with the decision to ${decision} ${a.id}:`);
        if (!by) return;
        await tg.api(`/v1/approvals/${encodeURIComponent(a.id)}`, { method: "POST", body: JSON.stringify({ decision, by }) });
        tg.show();
      };
      return el("div", { class: "approval" },
        el("b", { text: a.tool }), ` for ${a.principal_id}: `, el("code", { text: JSON.stringify(a.args) }),
        el("div", { class: "sub", text: `${a.reason} Asked ${tg.time(a.created_at)}; expires ${tg.datetime(a.expires_at)}.` }),
        el("button", { type: "button", class: "approve", onclick: () => decide("approve"), text: "Approve" }),
        el("button", { type: "button", class: "deny", onclick: () => decide("deny"), text: "Deny" }));
    }));
  }

  function renderQuotas(list) {
    const body = $("#quotas tbody");
    const row = (text) => el("tr", {}, el("td", { colspan: "7", class: "empty", text }));
    if (!list) { body.replaceChildren(row("Only an operator key (approver) sees quotas.")); return; }
    if (!list.length) { body.replaceChildren(row("No quota is in use.")); return; }
    body.replaceChildren(...list.map((q) => el("tr", {},
      el("td", { text: q.quota }), el("td", { text: q.key }),
      el("td", { class: "num", text: count(q.used) }), el("td", { class: "num", text: count(q.limit) }),
      el("td", {}, tg.badge(q.left > 0, count(q.left))),
      el("td", { text: q.window }), el("td", { text: tg.datetime(q.next_free_at) }))));
  }

  async function render() {
    const window = $("#window").value;
    if (!tools) {
      const t = await tg.api("/v1/tools?scope=all").catch((e) => { if (e instanceof tg.SignInNeeded) throw e; return tg.api("/v1/tools"); });
      tools = t.tools || [];
    }
    const optional = (p) => p.catch((e) => { if (e instanceof tg.SignInNeeded) throw e; return null; });
    const [sum, stats, alerts, breakers, approvals, quotas] = await Promise.all([
      optional(tg.api("/v1/summary?window=" + window)), tg.api("/v1/stats?window=" + window), tg.api("/v1/alerts"),
      optional(tg.api("/v1/breakers")), optional(tg.api("/v1/approvals?status=pending")), optional(tg.api("/v1/quotas"))]);
    const series = await Promise.all(tools.map((t) => tg.api(`/v1/stats/series?tool=${encodeURIComponent(t.name)}&window=${window}`)));
    headline(sum, stats);
    renderAlerts(alerts.alerts || [], stats);
    // The tools with calls first (by name), then the idle ones.
    const shown = tools.map((t, i) => ({ t, f: (stats.tools || {})[t.name] || { calls: 0 }, s: series[i] }))
      .sort((a, b) => (b.f.calls > 0) - (a.f.calls > 0) || a.t.name.localeCompare(b.t.name));
    shown.forEach((x) => plan(x.s, window)); // settles timeoutShown for the legends
    $("#tools").replaceChildren(...shown.map((x) => toolCard(x.t, x.f, x.s)));
    shown.forEach((x) => { if (x.f.samples) drawChart(x.t.name, x.s, window); });
    renderDeps(stats.dependencies, (breakers && breakers.breakers) || []);
    renderApprovals(approvals && approvals.approvals);
    renderQuotas(quotas && quotas.quotas);
  }

  tg.views.overview = { render, poll: true };
})(window.TG);
