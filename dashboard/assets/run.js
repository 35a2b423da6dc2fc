// toolgate console, one run as a trace: every step on one time axis, a bar
// from its start to its end with its attempts inside; its arguments,
// outcome, side effect and state change; an unknown outcome linked to the
// step that settled it; the run's approvals and the replay check.
"use strict";
(function (tg) {
  const { $, el, ms } = tg;

  const at = (t) => new Date(t).getTime();
  const offset = (v) => "+" + ms(v);

  // statesBefore is the state before each step: the initial state with the
  // top-level keys every earlier step set (replay does the same).
  function statesBefore(initial, history) {
    let cur = Object.assign({}, initial || {});
    return history.map((h) => {
      const before = cur;
      if (h.state_patch) cur = Object.assign({}, cur, h.state_patch);
      return before;
    });
  }

  function diff(before, patch) {
    if (!patch || !Object.keys(patch).length) return tg.empty("No state change.");
    const show = (v) => v === undefined ? "(not set)" : JSON.stringify(v);
    return el("table", { class: "diff" }, el("thead", {}, el("tr", {}, el("th", { text: "State key" }), el("th", { text: "Before" }), el("th", { text: "After" }))),
      el("tbody", {}, ...Object.keys(patch).sort().map((k) => el("tr", {},
        el("td", {}, el("code", { text: k })), el("td", { class: "del" }, el("code", { text: show(before[k]) })),
        el("td", { class: "add" }, el("code", { text: show(patch[k]) }))))));
  }

  function kind(h) {
    if (h.side_effect === "unknown") return "unknown";
    return h.ok ? "ok" : "fail";
  }

  // links are the arrows between an unknown outcome and the step that
  // settled it.
  function links(h) {
    const out = el("div", { class: "links" });
    if (h.side_effect === "unknown") {
      out.append(h.settled_by ? el("span", {}, "Outcome unknown, settled by ", el("a", { href: "#step-" + h.settled_by, class: "settle", "data-step": String(h.settled_by), text: "step " + h.settled_by }), ".")
        : el("span", { text: "Outcome unknown and not settled yet: repeat the call (toolgate verifies first) or run toolgate reconcile." }));
    }
    for (const s of h.settles || []) {
      out.append(el("span", {}, "Settles the unknown outcome of ", el("a", { href: "#step-" + s, class: "settle", "data-step": String(s), text: "step " + s }), "."));
    }
    return out.children.length ? out : null;
  }

  function step(h, t0, span, before) {
    const start = at(h.started_at) - t0;
    const took = Math.max(0, h.latency_ms || (at(h.finished_at) - at(h.started_at)));
    const bar = el("span", { class: "bar", title: `${h.tool}: from ${offset(start)} for ${ms(took)}` });
    bar.style.left = (100 * start / span).toFixed(3) + "%";
    bar.style.width = Math.max(0.6, 100 * took / span).toFixed(3) + "%";
    // toolgate keeps how many attempts a call made, not when each began:
    // they share the bar evenly. A call that sent nothing (refused, or
    // settled by a verify read or a replay) has an empty bar.
    for (let i = 0; i < h.attempts; i++) bar.append(el("i", { class: "attempt" }));
    if (!h.attempts) bar.classList.add("none");
    const tries = h.attempts ? tg.plural(h.attempts, "attempt") : "no attempt sent";
    const flags = [h.replayed && "replayed", h.verified && "verified"].filter(Boolean);
    const summary = el("summary", {},
      el("span", { class: "lbl" }, el("b", { text: String(h.step) }), " ", el("span", { class: "tool", text: h.tool }), " ", tg.badge(h.side_effect === "unknown" ? null : h.ok, h.code)),
      el("span", { class: "track" }, bar),
      el("span", { class: "took", text: `${ms(took)} · ${tries}` }));
    const facts = el("dl", { class: "facts" });
    const fact = (k, v) => facts.append(el("dt", { text: k }), el("dd", {}, v));
    fact("Started", `${tg.time(h.started_at)} (${offset(start)})`);
    fact("Took", ms(took));
    fact("Attempts", String(h.attempts));
    fact("Outcome", tg.badge(h.side_effect === "unknown" ? null : h.ok, h.code));
    fact("Side effect", h.side_effect + (flags.length ? ` (${flags.join(", ")})` : ""));
    if (h.dependency) fact("Dependency", h.dependency);
    fact("Call id", el("code", { text: h.call_id }));
    if (h.trace_id) fact("Trace id", el("code", { text: h.trace_id }));
    const body = el("div", { class: "stepbody" }, facts,
      h.observation ? el("p", { class: "obs" }, el("b", { text: "Told the model: " }), h.observation) : null,
      el("details", { class: "args" }, el("summary", { text: "Arguments" }), el("pre", { text: tg.json(h.args) })),
      el("h4", { text: "State change" }), diff(before, h.state_patch));
    return el("li", { class: "step " + kind(h), id: "step-" + h.step }, el("details", { class: "stepdetails" }, summary, body), links(h));
  }

  function axis(span) {
    const ticks = el("div", { class: "axis", "aria-hidden": "true" });
    for (const f of [0, 0.25, 0.5, 0.75, 1]) {
      const t = el("span", { text: offset(span * f) });
      t.style.left = (100 * f) + "%";
      ticks.append(t);
    }
    return el("div", { class: "axisrow" }, el("span", { class: "lbl", text: "Step" }), ticks, el("span", { class: "took", text: "Took" }));
  }

  function approvals(list) {
    if (!list) return tg.empty("This store does not keep approvals.");
    if (!list.length) return tg.empty("No call of this run asked for approval.");
    return el("ul", { class: "approvals" }, ...list.map((a) => el("li", {},
      el("b", { text: a.tool }), " ", tg.badge(a.status === "approved" ? true : a.status === "denied" ? false : null, a.expired && a.status === "pending" ? "expired" : a.status),
      a.by ? ` by ${a.by}${a.by_key ? " (key " + a.by_key + ")" : ""} at ${tg.datetime(a.decided_at)}` : " waiting for a person",
      el("div", { class: "sub", text: `${a.reason} Asked ${tg.datetime(a.created_at)}.` }),
      el("code", { text: JSON.stringify(a.args) }))));
  }

  function openRaw(id, key, box) {
    box.addEventListener("toggle", async () => {
      if (!box.open || box.dataset.loaded) return;
      box.dataset.loaded = "1";
      const pre = box.querySelector("pre");
      try {
        const rows = await tg.api(`/v1/executions?run=${encodeURIComponent(id)}&limit=1000${key ? "&key=" + encodeURIComponent(key) : ""}`);
        pre.textContent = JSON.stringify(rows.executions, null, 2);
      } catch (e) {
        pre.textContent = "Could not read the rows: " + e.message;
      }
    });
  }

  async function render(where) {
    const id = where.id;
    const key = new URLSearchParams(location.search).get("key");
    const q = key ? "?key=" + encodeURIComponent(key) : "";
    $("#run-h").textContent = "Run " + id;
    const [run, rep] = await Promise.all([tg.api(`/v1/runs/${encodeURIComponent(id)}${q}`),
      tg.api(`/v1/runs/${encodeURIComponent(id)}/replay${q}`)]);
    const hist = run.history || [];
    const t0 = hist.length ? Math.min(...hist.map((h) => at(h.started_at))) : at(run.created_at);
    const t1 = hist.length ? Math.max(...hist.map((h) => Math.max(at(h.finished_at), at(h.started_at) + (h.latency_ms || 0)))) : t0;
    const span = Math.max(1, t1 - t0);
    const unknown = hist.filter((h) => h.side_effect === "unknown" && !h.settled_by).length;
    $("#run-meta").replaceChildren(
      `For ${run.principal.id}${key ? " · key " + key : ""} · ${tg.plural(hist.length, "step")} over ${ms(span)} · opened ${tg.datetime(run.created_at)}`,
      run.max_steps ? ` · at most ${run.max_steps} steps` : "",
      unknown ? el("span", { class: "badge warn", text: `${unknown} unknown outcome${unknown === 1 ? "" : "s"} not settled` }) : "");
    const before = statesBefore(run.initial_state, hist);
    $("#trace").replaceChildren(axis(span), hist.length
      ? el("ol", { class: "steps" }, ...hist.map((h, i) => step(h, t0, span, before[i])))
      : tg.empty("No calls yet."));
    $("#run-approvals").replaceChildren(approvals(run.approvals));
    $("#run-replay").replaceChildren(tg.badge(rep.matches, rep.matches ? "replay matches" : "replay does NOT match"),
      rep.matches ? ` Rebuilding the state from the ${tg.plural(rep.steps, "row")} of the log gives the stored state.`
        : " The state rebuilt from the log differs from the stored state: the log and the run disagree.");
    $("#run-state").textContent = tg.json(run.state);
    const raw = el("details", { id: "raw" }, el("summary", { text: `Raw rows (GET /v1/executions?run=${id}${key ? "&key=" + key : ""})` }), el("pre", { text: "loading…" }));
    openRaw(id, key, raw);
    $("#run-raw").replaceChildren(raw);
  }

  // Following a link between steps opens the step it points to.
  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a.settle");
    if (!a) return;
    const target = document.getElementById("step-" + a.dataset.step);
    if (target) target.querySelector("details").open = true;
  });

  tg.views.run = { render, poll: false };
})(window.TG);
