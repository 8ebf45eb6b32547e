// addrwatch site: progressive enhancement only. Every page works without
// this file; it adds copy buttons, saves a grant as soon as its level is
// picked (with Enter from the keyboard), checks a form as the owner types
// with the server's own validation, and keeps the page live: what an
// agent changes shows within about a second.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  enhance(document);
  var cursor = document.body.getAttribute("data-live-cursor");
  if (cursor !== null) { live(cursor, document.body.getAttribute("data-chain-cursor")); }
});

// enhance wires the controls under root: the whole page once, and each
// part the live view redraws.
function enhance(root) {
  // Copy buttons: <button data-copy="id-of-element"> copies that element's
  // text (or value) to the clipboard and says so next to the button, in
  // its status line (id-of-element-status), or else in the page's one
  // live region for copies (copy-status), as a page of many rows has.
  root.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) {
        return;
      }
      var text = source.value !== undefined ? source.value : source.textContent;
      var status = document.getElementById(button.getAttribute("data-copy") + "-status") || document.getElementById("copy-status");
      function say(words) {
        if (!status) { return; }
        // Emptied first, so that a second copy is announced again.
        status.textContent = "";
        setTimeout(function () { status.textContent = words; }, 50);
      }
      navigator.clipboard.writeText(text).then(function () {
        say("Copied.");
      }, function () {
        say("Copy failed: select the text and copy it yourself.");
      });
    });
  });

  // Grant menus: a level picked with the mouse or a finger submits its
  // row's form at once, so the table changes in place. From the keyboard
  // the arrow keys only move through the levels (a closed menu changes
  // its value on each arrow key, and saving the first one passed would
  // save the wrong level and lose the focus): Enter, or the row's Save
  // button, saves. The Save button also serves pages without scripts.
  root.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    var byKeyboard = false;
    select.addEventListener("keydown", function (e) {
      byKeyboard = true;
      if (e.key === "Enter" && select.form) {
        e.preventDefault();
        select.form.requestSubmit();
      }
    });
    select.addEventListener("pointerdown", function () { byKeyboard = false; });
    select.addEventListener("change", function () {
      if (!byKeyboard && select.form) { select.form.requestSubmit(); }
    });
  });

  // Forms with data-validate: as the owner types, the form is sent to
  // that address, which answers with the same check the API makes
  // ({"valid": true} or {"valid": false, "error": ...}), and the answer
  // is shown in the form's status line. Submitting still checks again.
  root.querySelectorAll("form[data-validate]").forEach(function (form) {
    var status = form.querySelector("[role=status]");
    var timer = null;
    var sent = 0;
    function check() {
      var address = form.elements.namedItem("address");
      if (!status || (address && address.value.trim() === "")) {
        if (status) { status.textContent = ""; status.className = "check"; }
        return;
      }
      var mine = ++sent;
      fetch(form.getAttribute("data-validate"), {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(new FormData(form)).toString()
      }).then(function (r) { return r.json(); }).then(function (answer) {
        if (mine !== sent) { return; } // an answer to older input
        status.textContent = answer.valid ? "Looks good." : answer.error;
        status.className = answer.valid ? "check valid" : "check invalid";
      }).catch(function () {
        if (mine === sent) { status.textContent = ""; status.className = "check"; }
      });
    }
    form.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(check, 250);
    });
  });
}

// live polls /live for the account's changes after the page's cursor,
// about once a second while the page is shown. A page that handles
// changes itself (the Sheet editor) cancels the addrwatch:changes event;
// on any other page the parts marked data-live are fetched again and
// swapped in, except a part holding a form the owner is filling in or a
// control with the focus: what the owner is typing is never replaced.
// Its own inner data-live parts are still brought up to date, and the
// status line says the rest waits (a save then shows what changed, as
// the versions make it). A new chain event (chain_cursor past the page's
// data-chain-cursor) redraws the same way: the notification centre, the
// Portfolio's last activity and the navigation's badge show it.
function live(cursor, chainCursor) {
  var status = document.getElementById("live-status");
  var busy = false;
  var stopped = false;
  function say(text) { if (status) { status.textContent = text; } }
  function poll() {
    if (busy || stopped || document.hidden) { return; }
    busy = true;
    fetch("/live?after=" + encodeURIComponent(cursor), { credentials: "same-origin" }).then(function (r) {
      if ((r.headers.get("Content-Type") || "").indexOf("application/json") !== 0) {
        stopped = true; // signed out or expired: the sign-in page answered
        say("Live updates stopped: your session has ended. Sign in again to see changes.");
        return null;
      }
      return r.json();
    }).then(function (v) {
      if (!v) { return null; }
      if (v.code) {
        stopped = true;
        say("Live updates stopped: " + v.error + " Reload the page to start them again.");
        return null;
      }
      var chainMoved = chainCursor !== null && v.chain_cursor !== undefined && String(v.chain_cursor) !== chainCursor;
      if (chainMoved) { chainCursor = String(v.chain_cursor); }
      if (v.changes.length === 0 && !v.gap) { return chainMoved ? redraw(v) : null; }
      cursor = String(v.cursor);
      var handled = !document.dispatchEvent(new CustomEvent("addrwatch:changes", { detail: v, cancelable: true }));
      return handled ? null : redraw(v);
    }).catch(function () {
      // A failed poll (the server restarting, a leader change) is tried
      // again on the next tick.
    }).then(function () { busy = false; });
  }
  setInterval(poll, 1000);

  function redraw(v) {
    return fetch(location.href, { credentials: "same-origin" }).then(function (r) {
      if (r.status !== 200 || r.url !== location.href) {
        say(who(v) + " changed what this page shows, and it is no longer here as it was. Reload the page to see it.");
        return null;
      }
      return r.text();
    }).then(function (html) {
      if (html === null) { return; }
      var fresh = new DOMParser().parseFromString(html, "text/html");
      var kept = 0;
      var swapped = 0;
      outermost(document).forEach(function (part) {
        var result = merge(part, fresh);
        kept += result.kept;
        swapped += result.swapped;
      });
      var at = new Date().toLocaleTimeString();
      if (v.changes.length === 0 && !v.gap) {
        return; // a new chain event shows itself; the status line is for changes
      }
      if (kept > 0) {
        say(who(v) + " changed this page (" + at + "). What you are editing is kept as you typed it; saving it shows what changed.");
      } else if (swapped > 0) {
        say(who(v) + " changed this page; it is up to date (" + at + ").");
      }
    });
  }

  function who(v) {
    if (v.changes.length === 0 && !v.gap) { return "New chain activity"; }
    var agents = v.changes.some(function (c) { return c.by_agent; });
    var owner = v.changes.some(function (c) { return !c.by_agent; });
    if (v.gap || (agents && owner)) { return "An agent or another of your pages"; }
    return agents ? "An agent" : "Another of your pages";
  }
}

// outermost returns the data-live parts under root that are not inside
// another data-live part.
function outermost(root) {
  return Array.prototype.filter.call(root.querySelectorAll("[data-live]"), function (el) {
    return !el.parentElement || !el.parentElement.closest("[data-live]");
  });
}

// merge brings part up to date from the fresh page: swapped whole when the
// owner is not editing in it, else part by inner part.
function merge(part, fresh) {
  var next = part.id ? fresh.getElementById(part.id) : null;
  if (!next) { return { kept: 0, swapped: 0 }; }
  if (!editing(part)) {
    if (part.innerHTML === next.innerHTML) { return { kept: 0, swapped: 0 }; }
    var copy = document.importNode(next, true);
    part.replaceWith(copy);
    enhance(copy);
    return { kept: 0, swapped: 1 };
  }
  var result = { kept: 1, swapped: 0 };
  Array.prototype.filter.call(part.querySelectorAll("[data-live]"), function (el) {
    return el.parentElement.closest("[data-live]") === part;
  }).forEach(function (inner) {
    var r = merge(inner, fresh);
    result.swapped += r.swapped;
  });
  return result;
}

// editing says whether the owner is at work in el: a control in it has
// the focus or holds something other than what the page was drawn with.
function editing(el) {
  var focused = document.activeElement;
  if (focused && focused !== document.body && el.contains(focused) && /^(INPUT|TEXTAREA|SELECT)$/.test(focused.tagName)) {
    return true;
  }
  return Array.prototype.some.call(el.querySelectorAll("input, textarea, select"), function (c) {
    if (c.type === "hidden") { return false; }
    if (c.tagName === "SELECT") {
      // Drawn with no option marked selected, a menu shows its first.
      var drawn = Array.prototype.findIndex.call(c.options, function (o) { return o.defaultSelected; });
      return c.selectedIndex !== Math.max(drawn, 0);
    }
    if (c.type === "checkbox" || c.type === "radio") { return c.checked !== c.defaultChecked; }
    return c.value !== c.defaultValue;
  });
}
