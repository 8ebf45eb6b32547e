// addrwatch Sheet editor. A Sheet has 1,000 slots of five cells; the
// editor keeps them as data and draws only the rows in view (plus a few
// either side), reusing the row elements as the owner scrolls, so a full
// Sheet of long cells opens and scrolls as fast as an empty one.
//
// Edits are kept per slot until saved, so scrolling a row out of view,
// a refused save or an agent's change never loses what the owner typed.
// A save sends the cells the page showed in that slot (its base); the
// server writes only while the slot still holds them, and otherwise
// answers with the slot as it is now, which the editor shows next to the
// owner's text for the owner to choose (see httpd/site/sheet.go).
//
// Every string from the Sheet is set as text or as an input's value,
// never as markup.
"use strict";

(function () {
  var ROW_HEIGHT = 34; // px; matches .sheet-line in site.css
  var OVERSCAN = 6;    // rows drawn beyond each edge of the view
  var SLOTS = 1000;
  var COLUMNS = 5;
  var BLANK = ["", "", "", "", ""];

  document.addEventListener("DOMContentLoaded", function () {
    var editor = document.getElementById("sheet-editor");
    if (!editor) { return; }
    editor.hidden = false;
    var path = "/spaces/" + encodeURIComponent(editor.getAttribute("data-space")) + "/sheet";
    var csrf = document.getElementById("sheet-csrf").value;
    var scroller = document.getElementById("sheet-scroll");
    var body = document.getElementById("sheet-body");
    var status = document.getElementById("sheet-status");
    var conflictsBox = document.getElementById("sheet-conflicts");
    var headCells = editor.querySelectorAll(".sheet-head [data-col]");

    var sheet = {
      revision: 0,
      headers: [].map.call(headCells, function (c) { return c.textContent; }),
      rows: new Map(),      // index -> cells as last read or saved
      order: null,          // the indexes shown under a filter; null: every slot
      filter: { address: "", chain: "" }
    };
    var edits = new Map();     // index -> {cells typed and not saved yet, base: the cells they were typed over}
    var saving = new Set();    // indexes with a save in flight
    var conflicts = new Map(); // index -> {current, revision} of a refused save
    var live = new Map();      // index -> the row element drawing it
    var spare = [];            // row elements not in use
    var drawPending = false;
    var headingBase = null;    // the fifth heading the page showed, when it changed meanwhile
    var headingBox = document.getElementById("fifth-heading");
    // The fifth heading as the box was last filled from the server, with
    // the Sheet's revision then: a save's base. A read of the Sheet fills
    // the box again only while the owner has not touched it, so a live
    // update never replaces what is being typed.
    var headingShown = { text: headingBox.value, revision: sheet.revision };

    function say(text, kind) {
      status.textContent = text;
      status.className = "check" + (kind ? " " + kind : "");
    }

    function same(a, b) {
      if (!a || !b || a.length !== b.length) { return false; }
      for (var i = 0; i < a.length; i++) { if (a[i] !== b[i]) { return false; } }
      return true;
    }

    function stored(index) { return sheet.rows.get(index) || BLANK; }

    // --- drawing ---------------------------------------------------------

    function makeRow() {
      var row = document.createElement("div");
      row.className = "sheet-line sheet-row";
      row.hidden = true;
      row.indexCell = document.createElement("span");
      row.indexCell.className = "sheet-index";
      row.appendChild(row.indexCell);
      row.inputs = [];
      row.labels = [];
      for (var c = 0; c < COLUMNS; c++) {
        var label = document.createElement("label");
        label.className = "visually-hidden";
        var input = document.createElement("input");
        input.type = "text";
        input.maxLength = 512;
        input.autocomplete = "off";
        input.spellcheck = false;
        row.appendChild(label);
        row.appendChild(input);
        row.labels.push(label);
        row.inputs.push(input);
      }
      row.mark = document.createElement("span");
      row.mark.className = "sheet-mark";
      row.appendChild(row.mark);
      row.removeButton = document.createElement("button");
      row.removeButton.type = "button";
      row.removeButton.className = "secondary sheet-delete";
      row.removeButton.appendChild(document.createTextNode("Delete"));
      row.removeWhich = document.createElement("span");
      row.removeWhich.className = "visually-hidden";
      row.removeButton.appendChild(row.removeWhich);
      row.appendChild(row.removeButton);
      body.appendChild(row);
      return row;
    }

    // fill writes slot index into row: the owner's unsaved text if any,
    // else the stored cells.
    function fill(row, index) {
      row.index = index;
      row.setAttribute("data-index", index);
      row.indexCell.textContent = index;
      var cells = edits.has(index) ? edits.get(index).cells : stored(index);
      for (var c = 0; c < COLUMNS; c++) {
        var input = row.inputs[c];
        input.id = "cell-" + index + "-" + c;
        if (input.value !== cells[c]) { input.value = cells[c]; }
        row.labels[c].htmlFor = input.id;
        row.labels[c].textContent = "Index " + index + ", " + (sheet.headers[c] || "column " + (c + 1));
      }
      row.removeWhich.textContent = " index " + index;
      mark(row);
    }

    function mark(row) {
      var index = row.index;
      var text = "";
      var kind = "";
      if (conflicts.has(index)) { text = "Changed meanwhile"; kind = "conflict"; }
      else if (saving.has(index)) { text = "Saving…"; kind = "saving"; }
      else if (edits.has(index)) { text = "Not saved"; kind = "edited"; }
      row.mark.textContent = text;
      row.className = "sheet-line sheet-row" + (kind ? " " + kind : "");
    }

    function remark(index) {
      var row = live.get(index);
      if (row) { mark(row); }
    }

    function count() { return sheet.order ? sheet.order.length : SLOTS; }

    // draw places a row element at every position in view, reusing those
    // that scrolled out. A row keeps its element while it stays in view,
    // so the cell being typed into is never swapped under the owner.
    function draw() {
      drawPending = false;
      var start = performance.now();
      var n = count();
      body.style.height = n * ROW_HEIGHT + "px";
      var first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - OVERSCAN);
      var last = Math.min(n, Math.ceil((scroller.scrollTop + scroller.clientHeight) / ROW_HEIGHT) + OVERSCAN);
      var wanted = new Map();
      for (var p = first; p < last; p++) {
        wanted.set(sheet.order ? sheet.order[p] : p, p);
      }
      live.forEach(function (row, index) {
        if (!wanted.has(index)) {
          if (row.contains(document.activeElement)) { document.activeElement.blur(); }
          row.hidden = true;
          live.delete(index);
          spare.push(row);
        }
      });
      wanted.forEach(function (position, index) {
        var row = live.get(index);
        if (!row) {
          row = spare.pop() || makeRow();
          fill(row, index);
          live.set(index, row);
          row.hidden = false;
        }
        row.style.transform = "translateY(" + position * ROW_HEIGHT + "px)";
      });
      performance.measure("sheet-draw", { start: start });
    }

    function redraw() {
      live.forEach(function (row, index) { fill(row, index); });
      draw();
    }

    scroller.addEventListener("scroll", function () {
      if (!drawPending) {
        drawPending = true;
        requestAnimationFrame(draw);
      }
    }, { passive: true });
    window.addEventListener("resize", draw);

    // --- talking to the server -------------------------------------------

    function answer(r) {
      var type = r.headers.get("Content-Type") || "";
      if (type.indexOf("application/json") !== 0) {
        return { status: r.status, body: { error: "The page is out of date or your session ended. Copy anything you typed, then reload the page." } };
      }
      return r.json().then(function (b) { return { status: r.status, body: b }; });
    }

    function offline() {
      return { status: 0, body: { error: "The server did not answer. What you typed is kept: try again." } };
    }

    function post(suffix, fields) {
      var form = new URLSearchParams();
      form.set("csrf", csrf);
      Object.keys(fields).forEach(function (k) { form.set(k, fields[k]); });
      return fetch(path + suffix, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: form.toString()
      }).then(answer, offline);
    }

    function cellFields(prefix, cells, into) {
      for (var c = 0; c < COLUMNS; c++) { into[prefix + c] = cells[c]; }
      return into;
    }

    // load reads the Sheet (or the rows matching the filter) afresh.
    function load() {
      var q = new URLSearchParams();
      if (sheet.filter.address) { q.set("address", sheet.filter.address); }
      if (sheet.filter.chain) { q.set("chain", sheet.filter.chain); }
      return fetch(path + ".json?" + q.toString(), { credentials: "same-origin" }).then(answer, offline).then(function (a) {
        if (a.status !== 200) {
          say(a.body.error, "invalid");
          return false;
        }
        apply(a.body);
        return true;
      });
    }

    // apply takes a read of the Sheet: unsaved edits stay as typed.
    function apply(snap) {
      sheet.revision = snap.revision;
      sheet.headers = snap.headers;
      sheet.rows = new Map();
      snap.rows.forEach(function (r) { sheet.rows.set(r.index, r.cells); });
      sheet.order = snap.filtered ? snap.rows.map(function (r) { return r.index; }) : null;
      headCells.forEach(function (cell, c) { cell.textContent = sheet.headers[c]; });
      if (headingBase === null && document.activeElement !== headingBox && headingBox.value === headingShown.text) {
        headingBox.value = sheet.headers[4];
        headingShown = { text: sheet.headers[4], revision: sheet.revision };
      }
      // An edit whose row changed under it (an agent wrote it, or a delete
      // or compaction moved another row into its slot) becomes a conflict
      // at once, so the owner sees it before saving.
      edits.forEach(function (edit, index) {
        if (!conflicts.has(index) && !saving.has(index) && !same(stored(index), edit.base)) {
          conflicts.set(index, { current: stored(index), revision: sheet.revision });
        }
      });
      showConflicts();
      redraw();
    }

    // save sends the owner's text of slot index. over is set when the
    // owner chose to replace a row that changed meanwhile.
    function save(index, over) {
      var edit = edits.get(index);
      var conflict = conflicts.get(index);
      if (!edit || saving.has(index) || (conflict && !over)) { return; }
      var cells = edit.cells;
      var fields = { expected_revision: over ? conflict.revision : sheet.revision };
      cellFields("b", over ? conflict.current : edit.base, fields);
      cellFields("c", cells, fields);
      saving.add(index);
      remark(index);
      post("/rows/" + index, fields).then(function (a) {
        saving.delete(index);
        if (a.status === 200) {
          var saved = a.body.updated_rows[0].cells;
          sheet.rows.set(index, saved);
          sheet.revision = a.body.revision;
          var now = edits.get(index);
          if (!now || same(now.cells, cells)) {
            edits.delete(index);
          } else {
            now.base = saved; // typed on while it saved
          }
          conflicts.delete(index);
          showConflicts();
          say("Saved index " + index + ".", "valid");
        } else if (a.status === 409 && a.body.current) {
          conflicts.set(index, { current: a.body.current, revision: a.body.revision });
          showConflicts();
          say("Index " + index + " was not saved: " + a.body.error, "invalid");
        } else {
          say("Index " + index + " was not saved: " + a.body.error, "invalid");
        }
        var row = live.get(index);
        if (row) { fill(row, index); }
        if (edits.has(index) && !conflicts.has(index) && a.status === 200) { save(index); }
      });
    }

    // --- conflicts -------------------------------------------------------

    function showConflicts() {
      conflictsBox.textContent = "";
      conflicts.forEach(function (c, index) {
        var box = document.createElement("div");
        box.className = "card sheet-conflict";
        box.id = "conflict-" + index;
        var p = document.createElement("p");
        p.textContent = "Index " + index + " changed before your edit was saved (an agent, or another page). Nothing was overwritten.";
        box.appendChild(p);
        [["It now holds", c.current], ["You typed", edits.has(index) ? edits.get(index).cells : BLANK]].forEach(function (pair) {
          var line = document.createElement("p");
          line.className = "sheet-cells";
          var what = document.createElement("strong");
          what.textContent = pair[0] + ": ";
          line.appendChild(what);
          pair[1].forEach(function (cell, i) {
            var s = document.createElement("span");
            s.textContent = cell === "" ? "(blank)" : cell;
            line.appendChild(s);
            if (i < COLUMNS - 1) { line.appendChild(document.createTextNode(" | ")); }
          });
          if (pair[0] === "It now holds") { line.setAttribute("data-current", ""); }
          box.appendChild(line);
        });
        var mine = document.createElement("button");
        mine.type = "button";
        mine.textContent = "Save mine over it";
        mine.addEventListener("click", function () { save(index, true); });
        var theirs = document.createElement("button");
        theirs.type = "button";
        theirs.className = "secondary";
        theirs.textContent = "Use what it holds now";
        theirs.addEventListener("click", function () {
          sheet.rows.set(index, c.current);
          edits.delete(index);
          conflicts.delete(index);
          showConflicts();
          var row = live.get(index);
          if (row) { fill(row, index); }
        });
        box.appendChild(mine);
        box.appendChild(document.createTextNode(" "));
        box.appendChild(theirs);
        conflictsBox.appendChild(box);
      });
    }

    // --- editing ---------------------------------------------------------

    function rowOf(node) {
      var row = node && node.closest ? node.closest(".sheet-row") : null;
      return row && row.index !== undefined ? row : null;
    }

    body.addEventListener("input", function (e) {
      var row = rowOf(e.target);
      if (!row) { return; }
      var typed = row.inputs.map(function (i) { return i.value; });
      if (edits.has(row.index)) {
        edits.get(row.index).cells = typed;
      } else {
        edits.set(row.index, { cells: typed, base: stored(row.index).slice() });
      }
      if (conflicts.has(row.index)) { showConflicts(); }
      mark(row);
    });

    body.addEventListener("keydown", function (e) {
      var row = rowOf(e.target);
      if (!row || e.target.tagName !== "INPUT") { return; }
      if (e.key === "Enter") {
        e.preventDefault();
        save(row.index);
      } else if (e.key === "Escape" && edits.has(row.index) && !conflicts.has(row.index)) {
        edits.delete(row.index);
        fill(row, row.index);
      }
    });

    // Leaving a row saves it.
    body.addEventListener("focusout", function (e) {
      var row = rowOf(e.target);
      if (row && rowOf(e.relatedTarget) !== row) { save(row.index); }
    });

    body.addEventListener("click", function (e) {
      var button = e.target.closest ? e.target.closest("button.sheet-delete") : null;
      var row = rowOf(button);
      if (row) { deleteRow(row.index); }
    });

    // Deleting or compacting renumbers rows, so neither runs while an
    // edit waits: its index would name another row afterwards.
    function pendingEdits() {
      if (edits.size === 0) { return false; }
      say("Save or undo your edits first (index " + Array.from(edits.keys()).join(", ") + "): deleting and compacting renumber rows.", "invalid");
      return true;
    }

    function deleteRow(index) {
      if (pendingEdits()) { return; }
      var below = 0;
      sheet.rows.forEach(function (_, i) { if (i > index) { below++; } });
      if (!window.confirm("Delete index " + index + "? The " + below + " stored rows below it each move up one slot.")) { return; }
      var fields = cellFields("b", stored(index), { expected_revision: sheet.revision });
      post("/rows/" + index + "/delete", fields).then(function (a) {
        if (a.status === 200) {
          load().then(function () {
            say("Deleted index " + index + ": " + a.body.shifted_rows + " rows below it moved up one slot.", "valid");
          });
        } else {
          say("Index " + index + " was not deleted: " + a.body.error, "invalid");
          if (a.status === 409) { load(); }
        }
      });
    }

    document.getElementById("sheet-compact").addEventListener("click", function () {
      if (pendingEdits()) { return; }
      post("/compact", {}).then(function (a) {
        if (a.status !== 200) {
          say("Not compacted: " + a.body.error, "invalid");
          return;
        }
        load().then(function () {
          say(a.body.moved_rows === 0 ? "Already compact: no row moved." : "Compacted: " + a.body.moved_rows + " rows moved up, in order.", "valid");
        });
      });
    });

    document.getElementById("sheet-heading").addEventListener("submit", function (e) {
      e.preventDefault();
      var heading = headingBox.value;
      var base = headingBase !== null ? headingBase.current : headingShown.text;
      var rev = headingBase !== null ? headingBase.revision : headingShown.revision;
      post("/headers", { expected_revision: rev, base: base, heading: heading }).then(function (a) {
        if (a.status === 200) {
          headingBase = null;
          headingShown = { text: heading, revision: a.body.revision };
          sheet.revision = a.body.revision;
          sheet.headers = a.body.headers;
          headCells.forEach(function (cell, c) { cell.textContent = sheet.headers[c]; });
          redraw();
          say("Fifth heading saved.", "valid");
        } else if (a.status === 409 && a.body.current) {
          headingBase = { current: a.body.current[0], revision: a.body.revision };
          say("The fifth heading was changed meanwhile to “" + a.body.current[0] + "”. Yours is still in the box: save again to replace it.", "invalid");
        } else {
          say("The heading was not saved: " + a.body.error, "invalid");
        }
      });
    });

    document.getElementById("sheet-filter").addEventListener("submit", function (e) {
      e.preventDefault();
      sheet.filter.address = document.getElementById("filter-address").value;
      sheet.filter.chain = document.getElementById("filter-chain").value;
      scroller.scrollTop = 0;
      load().then(function (ok) {
        if (ok) { say(sheet.order ? sheet.order.length + (sheet.order.length === 1 ? " matching row." : " matching rows.") : "Every slot shown."); }
      });
    });

    document.getElementById("filter-clear").addEventListener("click", function () {
      document.getElementById("filter-address").value = "";
      document.getElementById("filter-chain").value = "";
      sheet.filter = { address: "", chain: "" };
      load().then(function (ok) { if (ok) { say("Every slot shown."); } });
    });

    // The live view (site.js) reports the account's changes; this page
    // handles them itself: a change to this Space reads the Sheet again,
    // which keeps every edit and flags those whose row changed.
    document.addEventListener("addrwatch:changes", function (e) {
      e.preventDefault();
      var space = editor.getAttribute("data-space");
      var touched = e.detail.gap || e.detail.changes.some(function (c) {
        return c.resource.kind === "space" && c.resource.id === space;
      });
      if (touched) { load(); }
    });

    draw();
    load().then(function () {
      performance.mark("sheet-ready");
    });
  });
})();
