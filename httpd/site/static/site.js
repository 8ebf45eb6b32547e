// addrwatch site: progressive enhancement only. Every page works without
// this file; it adds copy buttons, submits a grant when its menu changes,
// and checks a form as the owner types with the server's own validation.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  // Copy buttons: <button data-copy="id-of-element"> copies that element's
  // text (or value) to the clipboard and says so next to the button.
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) {
        return;
      }
      var text = source.value !== undefined ? source.value : source.textContent;
      var status = document.getElementById(button.getAttribute("data-copy") + "-status");
      navigator.clipboard.writeText(text).then(function () {
        if (status) { status.textContent = "Copied."; }
      }, function () {
        if (status) { status.textContent = "Copy failed: select the text and copy it yourself."; }
      });
    });
  });

  // Grant menus: changing the level submits its row's form, so the table
  // changes in place; the Save button stays for keyboards and for pages
  // without scripts.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () {
      if (select.form) { select.form.requestSubmit(); }
    });
  });

  // Forms with data-validate: as the owner types, the form is sent to
  // that address, which answers with the same check the API makes
  // ({"valid": true} or {"valid": false, "error": ...}), and the answer
  // is shown in the form's status line. Submitting still checks again.
  document.querySelectorAll("form[data-validate]").forEach(function (form) {
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
});
