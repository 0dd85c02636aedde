// The support agent's console: keyboard shortcuts on the approval queue
// and a card's page, and the deadline countdown. Loaded with the page's
// CSP nonce; no inline handlers. Everything here is a shortcut for links
// and buttons that work without it.
(function () {
  "use strict";

  function cards() { return Array.prototype.slice.call(document.querySelectorAll("[data-card]")); }

  var current = -1;
  function select(i) {
    var list = cards();
    if (list.length === 0) { return; }
    current = Math.max(0, Math.min(list.length - 1, i));
    list.forEach(function (c, j) { c.classList.toggle("selected", j === current); });
    list[current].focus();
    list[current].scrollIntoView({ block: "nearest" });
  }

  // The shortcuts are a <details> near the heading: ? opens and closes it.
  function toggleHelp() {
    var help = document.getElementById("shortcuts");
    if (!help) { return; }
    help.open = !help.open;
    if (help.open) { help.querySelector("summary").focus(); }
  }

  // a on a write that cannot be undone (or needs two approvers) opens a
  // confirmation naming it; approving takes a second, deliberate key.
  function approve() {
    var b = document.querySelector("[data-testid=approve]");
    if (!b) { return false; }
    var d = b.getAttribute("data-confirm") && document.getElementById(b.getAttribute("data-confirm"));
    if (d && d.showModal) { d.showModal(); } else { b.click(); }
    return true;
  }
  document.addEventListener("click", function (e) {
    var c = e.target.closest && e.target.closest("[data-confirm-cancel]");
    if (c) { c.closest("dialog").close(); }
  });

  function typing(e) {
    var t = e.target;
    return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
  }

  function click(sel) {
    var el = document.querySelector(sel);
    if (el) { el.click(); return true; }
    return false;
  }

  function focusEl(sel) {
    var el = document.querySelector(sel);
    if (el) { el.focus(); el.scrollIntoView({ block: "center" }); return true; }
    return false;
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || typing(e)) { return; }
    // An open confirmation takes only its own keys (Enter, Esc, Tab).
    if (document.querySelector("dialog[open]")) { return; }
    var list = cards();
    switch (e.key) {
      case "j":
        // On a decided card, j goes on to the queue's next card.
        if (list.length === 0 && click("[data-testid=back-to-queue]")) { break; }
        select(current + 1);
        break;
      case "k": select(current - 1); break;
      case "?": toggleHelp(); break;
      case "Enter":
        if (current >= 0 && list[current] && document.activeElement === list[current]) {
          var open = list[current].querySelector("[data-open]");
          if (open) { open.click(); }
        } else { return; }
        break;
      case "a":
        if (!approve()) {
          if (current >= 0 && list[current]) { var o = list[current].querySelector("[data-open]"); if (o) { o.click(); } }
        }
        break;
      case "r": if (!focusEl("#reason")) { return; } break;
      case "e": if (!focusEl("[data-edit-first]")) { return; } break;
      default: return;
    }
    e.preventDefault();
  });

  // A form that failed comes back with its error summary focused
  // (autofocus does it without this script); a link in it moves the
  // focus to its field, not only the view.
  var summary = document.querySelector("[data-error-summary]");
  if (summary) {
    if (document.activeElement !== summary) { summary.focus(); }
    summary.addEventListener("click", function (e) {
      var a = e.target.closest("a[href^='#']");
      var field = a && document.getElementById(a.getAttribute("href").slice(1));
      if (!field) { return; }
      e.preventDefault();
      field.focus();
      var label = document.querySelector("label[for='" + field.id + "']");
      (label || field).scrollIntoView({ block: "center" });
    });
  }

  // After a decision the server marks the next card (autofocus, which
  // works without this script too); j and k go on from there.
  var next = document.querySelector("[data-focus-next]");
  if (next) {
    current = cards().indexOf(next);
    next.classList.add("selected");
    if (document.activeElement !== next) { next.focus(); }
  }

  // The server renders the time left; this keeps it counting.
  function fmt(ms) {
    if (ms <= 0) { return "no time: the deadline passed"; }
    var s = Math.floor(ms / 1000), m = Math.floor(s / 60), h = Math.floor(m / 60);
    if (h > 0) { return h + "h " + String(m % 60).padStart(2, "0") + "m"; }
    if (m > 0) { return m + "m " + String(s % 60).padStart(2, "0") + "s"; }
    return s + "s";
  }
  // The server's clock decides deadlines; count from its "now", not the
  // browser's, which may be off.
  var loaded = Date.now();
  function tick() {
    document.querySelectorAll("time[data-deadline]").forEach(function (t) {
      var serverNow = Date.parse(t.getAttribute("data-now")) || loaded;
      var left = Date.parse(t.getAttribute("data-deadline")) - (serverNow + Date.now() - loaded);
      t.textContent = fmt(left);
      t.classList.toggle("urgent", left < 15 * 60 * 1000);
    });
  }
  if (document.querySelector("time[data-deadline]")) { setInterval(tick, 1000); }
})();

// Live task view: the server says "change" (PostgreSQL LISTEN/NOTIFY behind
// it) and htmx fetches the live fragment; without EventSource the page
// still polls every few seconds.
(function () {
  "use strict";
  var live = document.querySelector("[data-task-events]");
  if (!live || !window.EventSource) { return; }
  var source = new EventSource(live.getAttribute("data-task-events"));
  source.addEventListener("change", function () {
    document.body.dispatchEvent(new Event("cs-changed"));
  });
})();
