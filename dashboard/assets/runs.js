// toolgate console, the runs list: newest first, searched by run id or
// principal, tool and outcome, a page at a time with the API's cursor. The
// filters and the page live in the address, so a search can be shared.
"use strict";
(function (tg) {
  const { $, el } = tg;
  const FILTERS = ["q", "principal", "tool", "outcome"];
  const CODES = ["ok", "timeout_unknown_outcome", "unknown_outcome", "timeout", "upstream_error", "connect_failed",
    "connect_timeout", "rate_limited", "rejected", "circuit_open", "invalid_output", "approval_required", "approval_denied",
    "forbidden", "not_owner", "quota_exceeded", "step_budget_exhausted", "missing_arguments", "unknown_arguments",
    "wrong_type", "invalid_argument", "unknown_tool", "duplicate_in_flight", "idempotency_conflict", "internal_error"];
  let formReady = false;

  // setUpForm fills the form's choices once (the tools when they could be
  // read) and sends its search to the address.
  async function setUpForm() {
    if (formReady) return;
    const t = await tg.api("/v1/tools?scope=all").catch((e) => { if (e instanceof tg.SignInNeeded) throw e; return { tools: [] }; });
    formReady = true;
    const outcome = $("#r-outcome");
    for (const c of CODES) outcome.append(el("option", { value: c, text: c }));
    const tool = $("#r-tool");
    for (const x of t.tools || []) tool.append(el("option", { value: x.name, text: x.name }));
    $("#runs-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const q = new URLSearchParams();
      for (const f of FILTERS) {
        const v = $("#r-" + f).value.trim();
        if (v) q.set(f, v);
      }
      tg.navigate("/runs" + (q.toString() ? "?" + q : ""));
    });
  }

  function row(r) {
    return el("tr", { "data-run": r.run_id },
      el("td", {}, tg.link(tg.runHref(r.run_id, r.key), r.run_id, { class: "runid" })),
      el("td", { text: r.principal_id }),
      el("td", { class: "num", text: tg.count(r.step) }),
      el("td", { text: r.last_tool || "no calls yet" }),
      el("td", {}, r.last_outcome ? tg.badge(r.last_outcome === "ok", r.last_outcome) : ""),
      el("td", { text: tg.datetime(r.created_at) }),
      el("td", { text: tg.datetime(r.updated_at) }),
      el("td", { text: r.key || "" }));
  }

  async function render(where, first) {
    await setUpForm();
    const here = new URLSearchParams(location.search);
    // The form shows the address's search when the view opens; a refresh
    // leaves what is being typed alone.
    if (first) for (const f of FILTERS) $("#r-" + f).value = here.get(f) || "";
    const q = new URLSearchParams();
    for (const f of FILTERS) if (here.get(f)) q.set(f, here.get(f));
    q.set("limit", "25");
    if (here.get("cursor")) q.set("cursor", here.get("cursor"));
    const list = await tg.api("/v1/runs?" + q);
    const runs = list.runs || [];
    const body = $("#runs tbody");
    if (!runs.length) body.replaceChildren(el("tr", {}, el("td", { colspan: "8", class: "empty", text: "No runs match." })));
    else body.replaceChildren(...runs.map(row));
    const pager = $("#runs-pager");
    pager.replaceChildren();
    if (here.get("cursor")) {
      const first = new URLSearchParams(here);
      first.delete("cursor");
      pager.append(tg.link("/runs" + (first.toString() ? "?" + first : ""), "Newest runs"));
    }
    if (list.next_cursor) {
      const next = new URLSearchParams(here);
      next.set("cursor", list.next_cursor);
      pager.append(tg.link("/runs?" + next, "Older runs", { rel: "next" }));
    }
    $("#runs-count").textContent = runs.length ? `${tg.plural(runs.length, "run")} on this page, newest first.` : "";
  }

  // The list refreshes only on its first page: a later page stays put.
  tg.views.runs = { render, get poll() { return !new URLSearchParams(location.search).get("cursor"); } };
})(window.TG);
