// toolgate console, shared helpers: plain JavaScript, no build step.
// Every number shown comes from the API as is; these only format it.
"use strict";
window.TG = (function () {
  const KEY = "toolgate.key"; // sessionStorage: gone when the tab closes
  const tg = { views: {}, key: sessionStorage.getItem(KEY) || "" };

  tg.$ = (sel, root) => (root || document).querySelector(sel);

  // el builds an element: attrs "class", "text", "on<event>" or attributes;
  // kids are nodes or strings (null and undefined are skipped, never shown).
  tg.el = function (tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids) if (k != null && k !== false) e.append(k);
    return e;
  };

  tg.setKey = function (key) {
    tg.key = key;
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  };

  // SignInNeeded is thrown by api when the server refuses the key: the
  // page then shows the sign-in box and stops polling.
  class SignInNeeded extends Error {}
  tg.SignInNeeded = SignInNeeded;

  tg.api = async function (path, opts) {
    const headers = { "Accept": "application/json" };
    if (tg.key) headers["Authorization"] = "Bearer " + tg.key;
    if (opts && opts.body) headers["Content-Type"] = "application/json";
    const resp = await fetch(path, Object.assign({ headers }, opts || {}));
    const body = await resp.json().catch(() => null);
    if (resp.status === 401) throw new SignInNeeded(body && body.error ? body.error.message : "this toolgate needs an API key");
    if (!resp.ok) {
      const err = new Error(body && body.error ? body.error.message : resp.statusText);
      err.status = resp.status;
      throw err;
    }
    return body;
  };

  // Formats. None of them ever returns "NaN", "undefined" or "null".
  const num = (v) => typeof v === "number" && isFinite(v);
  tg.ms = (v) => !num(v) ? "no data" : v >= 1000 ? (v / 1000).toFixed(v >= 10000 ? 0 : 1) + " s" : Math.round(v) + " ms";
  tg.pct = (v) => !num(v) ? "0%" : v === 0 ? "0%" : (v * 100).toFixed(v < 0.1 ? 1 : 0) + "%";
  tg.count = (v) => num(v) ? v.toLocaleString("en") : "0";
  tg.time = (t) => t ? new Date(t).toLocaleTimeString() : "";
  tg.datetime = (t) => t ? new Date(t).toLocaleString() : "";
  tg.plural = (n, one, many) => `${tg.count(n)} ${n === 1 ? one : (many || one + "s")}`;
  // dur writes a number of seconds as people read it: "90 s", "12 min", "3 h".
  tg.dur = (s) => s < 120 ? Math.round(s) + " s" : s < 7200 ? Math.round(s / 60) + " min" : Math.round(s / 3600) + " h";
  // json pretty-prints a value; absent values read "(none)".
  tg.json = (v) => v === undefined || v === null ? "(none)" : JSON.stringify(v, null, 2);

  tg.badge = (ok, text) => tg.el("span", { class: "badge " + (ok === true ? "ok" : ok === false ? "bad" : "warn"), text });

  // link is an in-page link: the router shows its view without a reload,
  // and the address can be copied, reloaded or opened in a new tab.
  tg.link = (href, text, attrs) => tg.el("a", Object.assign({ href, "data-nav": "" }, attrs || {}), text);
  // runHref is a run's page; key names the API key that owns it (an
  // approver key sees every key's runs).
  tg.runHref = (id, key) => "/runs/" + encodeURIComponent(id) + (key ? "?key=" + encodeURIComponent(key) : "");

  tg.empty = (text) => tg.el("p", { class: "empty", text });
  return tg;
})();
