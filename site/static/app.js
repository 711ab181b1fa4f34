/* Every page: a copy button on each code block. No requests, no libraries. */
(function () {
  "use strict";
  function copyText(text, button, label) {
    function done(ok) {
      button.textContent = ok ? "Copied" : "Press Ctrl+C";
      setTimeout(function () { button.textContent = label || "Copy"; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
      return;
    }
    var area = document.createElement("textarea");  // file:// pages are not a secure context
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    done(ok);
  }
  document.querySelectorAll("pre.highlight").forEach(function (pre) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy this code");
    button.addEventListener("click", function () { copyText(pre.querySelector("code").textContent, button); });
    pre.appendChild(button);
  });
  window.TrainkbCopy = copyText;  // search.js: the "Copy diagnosis" button
})();
/* The verification page: status filter buttons hide the checks (and entries, areas) without that status. */
(function () {
  "use strict";
  var buttons = document.querySelectorAll(".filters .filter");
  if (!buttons.length) return;
  function apply(filter) {
    var shown = 0;
    buttons.forEach(function (b) { b.setAttribute("aria-pressed", String(b.dataset.filter === filter)); });
    document.querySelectorAll(".verify-area").forEach(function (area) {
      var inArea = 0;
      area.querySelectorAll("tbody.verify-entry").forEach(function (entry) {
        var inEntry = 0;
        entry.querySelectorAll("tr[data-status]").forEach(function (row) {
          var show = filter === "all" || row.dataset.status.split(" ").indexOf(filter) >= 0;
          row.hidden = !show;
          if (show) inEntry++;
        });
        entry.hidden = !inEntry;
        inArea += inEntry;
      });
      area.hidden = !inArea;
      shown += inArea;
    });
    document.querySelector(".filter-empty").hidden = shown > 0;
    history.replaceState(Object.assign({}, history.state || {}, { filter: filter }), "");
  }
  buttons.forEach(function (b) { b.addEventListener("click", function () { apply(b.dataset.filter); }); });
  if (history.state && history.state.filter) apply(history.state.filter);
})();
