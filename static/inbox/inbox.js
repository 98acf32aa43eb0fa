/* The inbox in the browser (static: the CSP is script-src 'self').
 *
 * 1. Canned replies: in a reply box inside [data-canned-url], typing "/" opens the
 *    organization's ready answers (variables already filled by the server); arrows and
 *    Enter/Tab pick one, Escape closes.
 * 2. Desktop alerts for the member's own queue: the <script> tag's data-queue-url is
 *    polled; a handoff not seen before raises a Notification and a short beep. The first
 *    poll of a browser session only learns what is already there.
 */
(function () {
  "use strict";

  var script = document.currentScript;
  var QUEUE_URL = script ? script.getAttribute("data-queue-url") : null;
  var INTERVAL_MS = Number((script && script.getAttribute("data-interval-ms")) || 15000);
  var SEEN_KEY = "retaguarda.inbox.seenHandoffs";

  /* ---------- canned replies ---------- */
  var cache = {};
  var menu = null;
  var state = { box: null, textarea: null, items: [], index: 0 };

  function loadReplies(url) {
    if (!cache[url]) {
      cache[url] = fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { replies: [] }; })
        .then(function (data) { return data.replies || []; })
        .catch(function () { return []; });
    }
    return cache[url];
  }

  function slashToken(textarea) {
    var upto = textarea.value.slice(0, textarea.selectionStart);
    var match = /(^|\s)\/([\w-]*)$/.exec(upto);
    return match ? { query: match[2].toLowerCase(), start: upto.length - match[2].length - 1 } : null;
  }

  function closeMenu() {
    if (menu && menu.parentNode) { menu.parentNode.removeChild(menu); }
    menu = null;
    state.items = [];
  }

  function render() {
    if (!state.items.length) { closeMenu(); return; }
    if (!menu) {
      menu = document.createElement("ul");
      menu.className = "canned-menu";
      menu.setAttribute("role", "listbox");
      menu.addEventListener("mousedown", function (event) {
        var li = event.target.closest("li");
        if (li) { event.preventDefault(); pick(Number(li.getAttribute("data-index"))); }
      });
      state.box.appendChild(menu);
    }
    menu.textContent = "";
    state.items.forEach(function (reply, i) {
      var li = document.createElement("li");
      li.setAttribute("role", "option");
      li.setAttribute("data-index", String(i));
      li.setAttribute("aria-selected", i === state.index ? "true" : "false");
      var title = document.createElement("strong");
      title.textContent = "/" + reply.shortcut + " · " + reply.title;
      var preview = document.createElement("small");
      preview.textContent = reply.text;
      li.appendChild(title);
      li.appendChild(preview);
      menu.appendChild(li);
    });
  }

  function pick(i) {
    var reply = state.items[i];
    var textarea = state.textarea;
    var token = textarea && slashToken(textarea);
    if (!reply || !token) { closeMenu(); return; }
    var before = textarea.value.slice(0, token.start);
    var after = textarea.value.slice(textarea.selectionStart);
    textarea.value = before + reply.text + after;
    var caret = (before + reply.text).length;
    textarea.setSelectionRange(caret, caret);
    textarea.focus();
    closeMenu();
  }

  document.addEventListener("input", function (event) {
    var textarea = event.target;
    if (!(textarea instanceof HTMLTextAreaElement)) { return; }
    var box = textarea.closest("[data-canned-url]");
    if (!box) { return; }
    var token = slashToken(textarea);
    if (!token) { closeMenu(); return; }
    loadReplies(box.getAttribute("data-canned-url")).then(function (replies) {
      var current = slashToken(textarea);
      if (!current) { closeMenu(); return; }
      if (state.box !== box) { closeMenu(); }
      state.box = box;
      state.textarea = textarea;
      state.index = 0;
      state.items = replies.filter(function (r) {
        return r.shortcut.indexOf(current.query) === 0 || r.title.toLowerCase().indexOf(current.query) !== -1;
      });
      render();
    });
  });

  document.addEventListener("keydown", function (event) {
    if (!menu || event.target !== state.textarea) { return; }
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      var step = event.key === "ArrowDown" ? 1 : -1;
      state.index = (state.index + step + state.items.length) % state.items.length;
      render();
      event.preventDefault();
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      event.stopPropagation();
      pick(state.index);
    } else if (event.key === "Escape") {
      closeMenu();
    }
  }, true);

  document.addEventListener("focusout", function (event) {
    if (event.target === state.textarea) { window.setTimeout(closeMenu, 150); }
  });

  /* ---------- desktop alerts ---------- */
  function seen() {
    try { return JSON.parse(window.sessionStorage.getItem(SEEN_KEY) || "null"); } catch (e) { return null; }
  }

  function remember(ids) {
    try { window.sessionStorage.setItem(SEEN_KEY, JSON.stringify(ids)); } catch (e) { /* private mode */ }
  }

  function beep() {
    var Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) { return; }
    try {
      var ctx = new Ctx();
      var osc = ctx.createOscillator();
      var gain = ctx.createGain();
      osc.frequency.value = 880;
      gain.gain.value = 0.08;
      osc.connect(gain);
      gain.connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.18);
    } catch (e) { /* no audio: the notification still shows */ }
  }

  function notify(item) {
    if (!("Notification" in window) || window.Notification.permission !== "granted") { return; }
    var n = new window.Notification("Novo transbordo na sua fila", {
      body: item.contact + " está esperando a equipe.",
      tag: "handoff-" + item.id,
    });
    n.onclick = function () { window.focus(); window.location.href = item.url; };
    beep();
  }

  function poll() {
    if (!QUEUE_URL) { return Promise.resolve(); }
    return fetch(QUEUE_URL, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        var known = seen();
        var ids = data.handoffs.map(function (h) { return h.id; });
        if (known !== null) {
          data.handoffs.forEach(function (h) { if (known.indexOf(h.id) === -1) { notify(h); } });
        }
        remember(ids);
      })
      .catch(function () { /* offline for a moment: the next poll catches up */ });
  }

  function offerPermission() {
    if (!("Notification" in window) || window.Notification.permission !== "default") { return; }
    var tools = document.querySelector(".topbar-tools");
    if (!tools) { return; }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "button button-small button-ghost inbox-alerts";
    button.textContent = "Ativar alertas";
    button.title = "Avisos no computador quando chegar um transbordo na sua fila";
    button.addEventListener("click", function () {
      window.Notification.requestPermission().then(function () { button.remove(); });
    });
    tools.insertBefore(button, tools.firstChild);
  }

  window.retaguardaInbox = { poll: poll, notify: notify };

  function start() {
    offerPermission();
    if (QUEUE_URL) {
      poll();
      window.setInterval(poll, INTERVAL_MS);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
