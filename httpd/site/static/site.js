// addrwatch site: progressive enhancement only. Every page works without
// this file; it adds copy buttons and submits a grant when its menu changes.
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
});
