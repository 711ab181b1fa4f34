/* The two search boxes: paste a traceback (the ported engine) and full-text over the same index.
 * Results are built with textContent only, so nothing from the index or the paste becomes markup. */
(function () {
  "use strict";
  var data = window.TRAINKB_INDEX, root = document.body.dataset.root || "";
  if (!data || !window.TrainkbEngine) return;
  var engine = new window.TrainkbEngine.Engine(data.search);
  var pages = data.pages;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function entryLink(id, title) {
    var a = el("a", null, id + " " + title);
    a.href = root + id + "/index.html";
    return a;
  }
  function evidenceLine(ev) {
    var why = el("span", "why");
    why.appendChild(document.createTextNode("line " + ev.line + ": "));
    var text = ev.text.length > 240 ? ev.text.slice(0, 240) + "…" : ev.text;
    if (ev.span && ev.span[1] <= 240) {
      why.appendChild(document.createTextNode(text.slice(0, ev.span[0])));
      why.appendChild(el("mark", null, text.slice(ev.span[0], ev.span[1])));
      why.appendChild(document.createTextNode(text.slice(ev.span[1])));
    } else {
      why.appendChild(document.createTextNode(text));
    }
    return why;
  }

  /* multi-rank output: which rank broke first, above the matches (triage.js) */
  function triageBlock(t) {
    var box = el("div", "triage");
    var head = t.sole_culprit !== null ? "Rank " + t.sole_culprit + " broke first: " + t.reason + "."
      : t.culprits.length ? "Cannot single out one rank; suspects: ranks " + t.culprits.join(", ") + "."
      : "No rank shows an error of its own.";
    box.appendChild(el("p", "verdict", head));
    var list = el("ul");
    t.ranks.slice().sort(function (a, b) {
      return ((a.role !== "culprit" && a.role !== "suspect") - (b.role !== "culprit" && b.role !== "suspect")) || a.rank - b.rank;
    }).forEach(function (v) {
      var li = el("li", "rank " + v.role);
      li.appendChild(el("strong", null, "rank " + v.rank + " " + v.role + ": "));
      var what = v.error && v.how !== "silent" ? v.error : v.description;
      li.appendChild(document.createTextNode(what.length > 200 ? what.slice(0, 200) + "…" : what));
      if (v.rank === t.explained_rank && t.entry) {
        li.appendChild(document.createTextNode(" — "));
        li.appendChild(entryLink(t.entry.id, t.entry.title));
      }
      list.appendChild(li);
    });
    box.appendChild(list);
    if (t.root_cause_is_victim) {
      box.appendChild(el("p", "hint", "torchrun's \"Root Cause\" names rank " + t.root_cause_rank + ", which only suffered the failure."));
    }
    t.collect.forEach(function (tip) { box.appendChild(el("p", "hint", "Next time: " + tip)); });
    return box;
  }

  /* (a) paste your traceback */
  var pasteForm = document.getElementById("paste-form"), pasteInput = document.getElementById("paste-input");
  var pasteOut = document.getElementById("paste-results");
  function runPaste() {
    var text = pasteInput.value;
    pasteOut.textContent = "";
    if (!text.trim()) return;
    var response = engine.search(text, 5);
    var ranks = window.TrainkbTriage ? window.TrainkbTriage.triage(text, engine) : null;
    if (ranks) pasteOut.appendChild(triageBlock(ranks));
    pasteOut.appendChild(el("p", "verdict", response.abstained
      ? (response.results.length ? "No entry explains this with confidence. The closest:" : "No entry matches this.")
      : "Read as a " + response.query_kind + ". Best match first:"));
    var list = el("ol");
    response.results.forEach(function (r) {
      var li = el("li", "result");
      li.appendChild(entryLink(r.id, r.title));
      li.appendChild(document.createTextNode(" "));
      li.appendChild(el("span", "confidence " + r.confidence, r.confidence + " " + r.score.toFixed(1)));
      if (r.evidence.length) li.appendChild(evidenceLine(r.evidence[0]));
      list.appendChild(li);
    });
    if (response.results.length) pasteOut.appendChild(list);
  }
  pasteForm.addEventListener("submit", function (event) { event.preventDefault(); runPaste(); });
  pasteInput.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); runPaste(); }
  });

  /* (b) full text: BM25 over the exported postings, the last word also as a prefix */
  var vocabulary = Object.keys(data.search.idf).sort();
  function prefixed(prefix) {
    var lo = 0, hi = vocabulary.length, out = [];
    while (lo < hi) { var mid = (lo + hi) >> 1; if (vocabulary[mid] < prefix) lo = mid + 1; else hi = mid; }
    for (var i = lo; i < vocabulary.length && out.length < 30 && vocabulary[i].startsWith(prefix); i++) out.push(vocabulary[i]);
    return out;
  }
  function fullText(query) {
    var scores = new Map(), words = engine.norm.terms(query), lower = query.trim().toLowerCase();
    var raw = lower.match(/[a-z0-9_]+$/);
    function add(term, factor) {
      var postings = data.search.postings[term];
      if (!postings) return;
      postings.forEach(function (p) {
        scores.set(p[0], (scores.get(p[0]) || 0) + factor * data.search.idf[term] * p[1]);
      });
    }
    words.forEach(function (w) { add(w, 1); });
    if (raw && raw[0].length >= 2) prefixed(raw[0]).forEach(function (w) { if (words.indexOf(w) < 0) add(w, 0.6); });
    pages.forEach(function (p, i) {
      var hay = [p.id, p.title].concat(p.aliases, p.tags).join("\n").toLowerCase();
      if (p.id.toLowerCase() === lower) scores.set(i, (scores.get(i) || 0) + 1000);
      else if (lower.length >= 3 && hay.indexOf(lower) >= 0) scores.set(i, (scores.get(i) || 0) + 50);
    });
    return Array.from(scores.entries()).sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; }).slice(0, 20);
  }
  var findInput = document.getElementById("find-input"), findOut = document.getElementById("find-results");
  function runFind() {
    findOut.textContent = "";
    var query = findInput.value;
    if (!query.trim()) return;
    var hits = fullText(query);
    if (!hits.length) { findOut.appendChild(el("p", null, "Nothing found.")); return; }
    var list = el("ol");
    hits.forEach(function (hit) {
      var p = pages[hit[0]], li = el("li");
      li.appendChild(entryLink(p.id, p.title));
      li.appendChild(el("span", "why", p.summary));
      list.appendChild(li);
    });
    findOut.appendChild(list);
  }
  findInput.addEventListener("input", runFind);
  document.getElementById("find-form").addEventListener("submit", function (event) { event.preventDefault(); runFind(); });
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    if (event.key === "/" && tag !== "input" && tag !== "textarea") { event.preventDefault(); findInput.focus(); }
  });
  var q = new URLSearchParams(window.location.search).get("q");
  if (q) { findInput.value = q; runFind(); }
  /* for tests and the console: the same calls the boxes make */
  window.TrainkbSearch = { paste: function (text) { return engine.search(text, 10); }, fullText: fullText,
                           triage: function (text) { return window.TrainkbTriage.triage(text, engine); } };
})();
