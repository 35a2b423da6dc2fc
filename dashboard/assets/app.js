// toolgate console: the router, the sign-in box and the refresh loop.
// The views live in overview.js, runs.js and run.js; helpers in core.js.
"use strict";
(function (tg) {
  const { $ } = tg;
  const REFRESH_MS = 5000;
  const state = { timer: null, keysRequired: false, seq: 0 };

  // viewFor maps the address to a view: / the overview, /runs the list,
  // /runs/ID one run.
  function viewFor(path) {
    const m = path.match(/^\/runs\/([^/]+)\/?$/);
    if (m) return { name: "run", id: decodeURIComponent(m[1]) };
    if (/^\/runs\/?$/.test(path)) return { name: "runs" };
    return { name: "overview" };
  }

  function setStatus(text) { $("#live").textContent = text; }

  function stopPolling() {
    clearTimeout(state.timer);
    state.timer = null;
  }

  function showSignIn(message) {
    stopPolling();
    tg.setKey("");
    for (const v of document.querySelectorAll("main > .view")) v.hidden = true;
    $("#signin").hidden = false;
    $("#signin-error").textContent = message || "";
    $("#signout").hidden = true;
    setStatus("signed out");
    $("#key").focus();
  }

  // show renders the view of the current address, then, for views that
  // change by themselves, again every few seconds. An unauthenticated tab
  // never gets here: it sends no request but GET /healthz.
  async function show() {
    stopPolling();
    const seq = ++state.seq;
    const where = viewFor(location.pathname);
    state.shown = location.pathname + location.search;
    const view = tg.views[where.name];
    $("#signin").hidden = true;
    $("#signout").hidden = !tg.key;
    for (const v of document.querySelectorAll("main > .view")) v.hidden = v.id !== "view-" + where.name;
    for (const a of document.querySelectorAll("header nav a")) {
      if (a.dataset.view === where.name || (where.name === "run" && a.dataset.view === "runs")) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    $("#window-box").hidden = where.name !== "overview";
    document.title = { overview: "toolgate", runs: "Runs · toolgate", run: "Run " + where.id + " · toolgate" }[where.name];
    const tick = async (first) => {
      if (seq !== state.seq) return;
      try {
        await view.render(where, first);
        setStatus((view.poll ? "live · updated " : "loaded ") + new Date().toLocaleTimeString());
      } catch (e) {
        if (e instanceof tg.SignInNeeded) {
          showSignIn(tg.key ? "The server did not accept that key: " + e.message : "");
          return;
        }
        setStatus("not updated: " + e.message);
      }
      if (view.poll && seq === state.seq && !document.hidden) state.timer = setTimeout(() => tick(false), REFRESH_MS);
    };
    await tick(true);
  }
  tg.show = show;

  // navigate moves to an address inside the console without a reload.
  tg.navigate = function (href) {
    history.pushState(null, "", href);
    window.scrollTo(0, 0);
    // A keyboard user goes on from the top of the new view.
    $("#content").focus({ preventScroll: true });
    show();
  };

  document.addEventListener("click", (ev) => {
    const a = ev.target.closest("a[data-nav]");
    if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    tg.navigate(a.getAttribute("href"));
  });
  // Back and forward show the view of the address; a link to a step (a
  // #fragment on the same page) does not redraw it.
  window.addEventListener("popstate", () => { if (location.pathname + location.search !== state.shown) show(); });
  // A hidden tab stops polling; shown again, it catches up.
  document.addEventListener("visibilitychange", () => { if (!document.hidden && $("#signin").hidden && state.booted) show(); });

  $("#signin-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const key = $("#key").value.trim();
    if (!key) { $("#signin-error").textContent = "Enter a key first."; return; }
    tg.setKey(key);
    $("#key").value = "";
    show();
  });
  $("#signout").addEventListener("click", () => showSignIn("Signed out. The key was removed from this tab."));
  $("#window").addEventListener("change", show);

  async function boot() {
    try {
      const h = await (await fetch("/healthz", { headers: { "Accept": "application/json" } })).json();
      state.keysRequired = !!h.keys_required;
      $("#version").textContent = h.version ? "toolgate " + h.version : "";
    } catch (e) {
      setStatus("toolgate is not answering: " + e.message);
      return;
    }
    state.booted = true;
    if (state.keysRequired && !tg.key) { showSignIn(""); return; }
    show();
  }
  boot();
})(window.TG);
