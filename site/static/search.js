/* Search on every page: the header box (full text; `/` focuses it; a pasted traceback searches on
 * its own) and, on the home and search pages, the paste box (the ported engine).
 * The 1 MB index and the engine load on first use, not with the page. Results are built with
 * textContent only, so nothing from the index or the paste becomes markup. The last search is
 * kept in the history entry, so Back shows the same results. */
(function () {
  "use strict";
  var root = document.body.dataset.root || "";
  var loading = null;

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = root + src;
      script.onload = resolve;
      script.onerror = function () { reject(new Error("could not load " + src)); };
      document.head.appendChild(script);
    });
  }

  /* The index, then the engine and the view; one promise for every caller. It rejects, and every box says so, when
   * a script fails to load or engine.js refuses the index (another engine contract version, a field missing). */
  function ready() {
    if (!loading) {
      loading = loadScript("static/search-index.js")
        .then(function () { return loadScript("static/engine.js"); })
        .then(function () { return loadScript("static/triage.js"); })
        .then(function () { return loadScript("static/present.js"); })
        .then(function () { return makeSearch(window.TRAINKB_INDEX, window.TrainkbEngine); });
    }
    return loading;
  }

  function makeSearch(data, engineModule) {
    var engine = new engineModule.Engine(data.search), pages = data.pages;
    var vocabulary = Object.keys(data.search.idf).sort();
    function prefixed(prefix) {
      var lo = 0, hi = vocabulary.length, out = [];
      while (lo < hi) { var mid = (lo + hi) >> 1; if (vocabulary[mid] < prefix) lo = mid + 1; else hi = mid; }
      for (var i = lo; i < vocabulary.length && out.length < 30 && vocabulary[i].startsWith(prefix); i++) out.push(vocabulary[i]);
      return out;
    }
    /* BM25 over the exported postings, the last word also as a prefix */
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
    var words = data.present;  // what each status says, from kb's own view (trainkb._present)
    return { paste: function (text, top) { return engine.search(text, top === undefined ? 10 : top); },
             view: function (response) { return window.TrainkbPresent.view(response, words); },
             triage: function (text) { return window.TrainkbTriage ? window.TrainkbTriage.triage(text, engine) : null; },
             fullText: fullText, pages: pages, words: words };
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  /* a one-line field with its `inline code` as <code>, built from text nodes */
  function codeSpans(tag, cls, text) {
    var node = el(tag, cls), parts = text.split("`");
    if (parts.length % 2 === 0) parts.splice(-2, 2, parts[parts.length - 2] + "`" + parts[parts.length - 1]);
    parts.forEach(function (part, i) { node.appendChild(i % 2 ? el("code", null, part) : document.createTextNode(part)); });
    return node;
  }
  /* the catalogue ids named in a node's text, as links to their entries (the advice's "Check D19 ...") */
  function linkIds(node, pages) {
    var known = new Set(pages.map(function (p) { return p.id; }));
    var texts = [], walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {  // not inside code or a link
      if (!walker.currentNode.parentNode.closest("code, a")) texts.push(walker.currentNode);
    }
    texts.forEach(function (text) {
      var parts = text.nodeValue.split(/\b([A-Z]{1,2}[0-9]{1,3})\b/);
      if (!parts.some(function (part, i) { return i % 2 && known.has(part); })) return;
      var frag = document.createDocumentFragment();
      parts.forEach(function (part, i) {
        if (i % 2 && known.has(part)) {
          var a = el("a", "entry-ref", part);
          a.dataset.id = part;
          a.href = root + part + "/index.html";
          frag.appendChild(a);
        } else if (part) frag.appendChild(document.createTextNode(part));
      });
      text.parentNode.replaceChild(frag, text);
    });
    return node;
  }
  function entryLink(id, title) {
    var a = el("a", "entry-link");
    a.dataset.id = id;
    a.href = root + id + "/index.html#fix";  // land on the fix card
    a.appendChild(el("span", "id", id + " "));
    a.appendChild(codeSpans("span", null, title));
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
  function remember(key, value) {
    var state = Object.assign({}, history.state || {});
    state[key] = value;
    history.replaceState(state, "");
  }
  /* search cannot run: say why in the results area instead of showing results of a mismatched engine */
  function showBroken(out) {
    return function (error) {
      out.textContent = "";
      out.hidden = false;
      out.appendChild(el("p", "engine-error", "Search is unavailable: " + (error && error.message || error)));
    };
  }
  /* a paste, not a few words: several lines, or a long line */
  function looksPasted(text) { return /\n/.test(text.trim()) || text.length > 120; }

  function clip(text, limit) { return text.length <= limit ? text : text.slice(0, limit - 1) + "\u2026"; }
  /* a rank's row as `kb search` prints it (trainkb.triage._report.to_text): its error, or for a silent rank the
   * exit code the launcher gave it, then its collective counters and where in the paste it last spoke */
  function rankWhat(v) {
    var what = v.error && v.how !== "silent" ? clip(v.error, 150) : v.description;
    if (v.how === "silent" && v.exitcode !== null && v.exitcode !== undefined) {
      what += " (exit code " + v.exitcode + (v.exitcode === -15 ? ", sent by the launcher" : "") + ")";
    }
    if (["timeout", "connection", "abort", "barrier", "sigterm"].indexOf(v.how) >= 0 && v.error) {
      what = v.description + ": " + clip(v.error, 110);
    }
    var seq = v.collective || {}, counters = [];
    if (seq.op) counters.push(seq.op + " SeqNum=" + seq.seq_num);
    if ("last_enqueued" in seq) counters.push("last enqueued " + seq.last_enqueued + ", completed " + seq.last_completed);
    if (counters.length) what += " (" + counters.join("; ") + ")";
    var where = [];
    if (v.line) where.push("line " + v.line);
    if (typeof v.time === "number") where.push(new Date(v.time * 1000).toISOString().slice(11, 19));
    return where.length ? what + " [" + where.join(", ") + "]" : what;
  }
  /* multi-rank output: which rank broke first, above the matches (triage.js) */
  function triageBlock(t) {
    var box = el("div", "triage");
    /* worded as `kb triage` words it, so the heading never contradicts the rows' roles */
    var head = t.sole_culprit !== null ? "Rank " + t.sole_culprit + " broke first: " + t.reason + "."
      : t.culprits.length && t.basis === "own-error"
        ? "Ranks " + t.culprits.join(", ") + " failed on their own at about the same time."
      : t.culprits.length ? "Cannot single out one rank; suspects: ranks " + t.culprits.join(", ") + "."
      : "No rank shows an error of its own.";
    box.appendChild(el("p", "verdict", head));
    var list = el("ul");
    t.ranks.slice().sort(function (a, b) {
      return ((a.role !== "culprit" && a.role !== "suspect") - (b.role !== "culprit" && b.role !== "suspect")) || a.rank - b.rank;
    }).forEach(function (v) {
      var li = el("li", "rank " + v.role);
      li.appendChild(el("strong", null, "rank " + v.rank + " " + v.role + ": "));
      li.appendChild(document.createTextNode(rankWhat(v)));
      if (v.rank === t.explained_rank && t.entry) {
        li.appendChild(document.createTextNode(" — "));
        var link = entryLink(t.entry.id, t.entry.title);
        li.appendChild(link);
        if (t.entry.confidence === "low") {
          link.dataset.unconfirmed = "closest";  // its page says so, as a result's does (carryNotes)
          li.appendChild(document.createTextNode(" (unconfirmed)"));
        }
      }
      if (v.how === "silent" && v.last_line) li.appendChild(el("span", "last-line", "its last line: " + clip(v.last_line, 110)));
      list.appendChild(li);
    });
    /* the rows and hints fold under the verdict on a phone, so the answer below is on the first screen */
    var more = el("details", "ranks");
    more.appendChild(el("summary", null, "Every rank (" + t.ranks.length + ") and what to collect next time"));
    more.open = !window.matchMedia("(max-width: 40rem)").matches;
    more.appendChild(list);
    if (t.root_cause_is_victim) {
      more.appendChild(el("p", "hint", "torchrun's \"Root Cause\" names rank " + t.root_cause_rank + ", which only suffered the failure."));
    }
    t.collect.forEach(function (tip) { more.appendChild(codeSpans("p", "hint", "Next time: " + tip)); });
    box.appendChild(more);
    return box;
  }

  /* A result's label says what its place rests on (the view's label), never a bare score beside "low".
   * The score stays in the tooltip. */
  function label(row) {
    var cls = row.label === "closest" ? row.result.confidence : row.label;
    var node = el("span", "confidence " + cls, row.label_text);
    node.title = "score " + row.result.score.toFixed(1) + " of 100";
    return node;
  }
  function fixLine(summary) {
    var fix = codeSpans("span", "fix-line", summary);
    fix.insertBefore(el("strong", null, "Fix: "), fix.firstChild);
    return fix;
  }
  /* a quoted line longer than a glance, cut (an answer's why quotes the whole line that names the cause) */
  function shortQuotes(text) {
    return text.replace(/`([^`]*)`/g, function (all, inner) {
      return inner.length > 160 ? "`" + inner.slice(0, 160) + "\u2026`" : all;
    });
  }
  /* why the answer, above its fix; a phone shows its first lines (style.css) and a tap or Enter shows it all, so a
   * long why (a quoted line, triage's note) does not push the fix off the first screen */
  function reason(why) {
    var node = codeSpans("span", "reason", "Why: " + shortQuotes(why));
    node.tabIndex = 0;
    node.setAttribute("aria-expanded", "false");
    function toggle() { node.setAttribute("aria-expanded", String(node.getAttribute("aria-expanded") !== "true")); }
    node.addEventListener("click", toggle);
    node.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(); }
    });
    return node;
  }
  /* the evidence line, unless this response already showed that line */
  function evidenceOnce(ev, seen) {
    var key = ev.line + "\u0000" + ev.text;
    if (seen.has(key)) return null;
    seen.add(key);
    return evidenceLine(ev);
  }
  /* one result: its entry, its label, then what the response says of it */
  function resultItem(row, why, seen) {
    var r = row.result, candidate = row.label === "candidate";
    var li = el("li", candidate ? "result candidate" : "result");
    li.appendChild(entryLink(r.id, r.title));
    li.appendChild(document.createTextNode(" "));
    li.appendChild(label(row));
    if (why) li.appendChild(reason(why));
    if (r.tell && !why) {  // a candidate's sign, or the one known cause's among unknown others
      li.appendChild(codeSpans("span", "tell" + (r.tell.fired ? " fired" : ""),
                               (r.tell.fired ? "in your paste: " : "look for: ") + r.tell.says));
    }
    if (row.shows_fix) li.appendChild(fixLine(r.fix_summary));
    var shown = !candidate && r.evidence.length ? evidenceOnce(r.evidence[0], seen) : null;
    if (shown) li.appendChild(shown);
    return li;
  }
  function resultList(rows, candidate, why, seen) {
    var list = el("ol", candidate ? "candidates" : null);
    rows.forEach(function (row, i) { list.appendChild(resultItem(row, i === 0 ? why : null, seen)); });
    return list;
  }
  /* a symptom several causes print: the candidates and what decides between them first, the line once */
  function differential(shown, seen, pages) {
    var box = el("div", "differential"), candidates = shown.rows.slice(0, shown.leads);
    box.appendChild(el("p", "verdict", shown.headline));
    var line = candidates[0].result.evidence.filter(function (e) { return e.via === "signature"; })[0];
    if (line) box.appendChild(evidenceOnce(line, seen));
    box.appendChild(resultList(candidates, true, null, seen));
    if (shown.advice) box.appendChild(linkIds(codeSpans("p", "advice", shown.advice), pages));
    return box;
  }

  /* (a) the paste box: home and search pages */
  var pasteForm = document.getElementById("paste-form"), pasteInput = document.getElementById("paste-input");
  var pasteOut = document.getElementById("paste-results");
  var PICK = "trainkb-pick", HANDOFF = "trainkb-paste";  // sessionStorage keys: never in the URL

  /* the entries a result link belongs among when its place is unconfirmed: the candidates, or the closest */
  function unconfirmedGroup(shown) {
    var group = shown.kind === "differential" ? shown.rows.slice(0, shown.leads)
      : shown.rows.filter(function (row) { return row.label === "closest"; });
    return group.map(function (row) { return row.result; });
  }
  function markUnconfirmed(list, group, kind, above) {
    function brief(rs) { return rs.map(function (r) { return { id: r.id, title: r.title }; }); }
    var note = JSON.stringify({ kind: kind, entries: brief(group), above: brief(above || []) });
    list.querySelectorAll("a.entry-link").forEach(function (a) {
      var id = a.dataset.id;
      if (group.some(function (r) { return r.id === id; })) { a.dataset.group = note; }
    });
  }
  /* every other link in the results to an unconfirmed entry (the triage row's, an id in the advice) carries the
   * note its result link has, so the page opens marked whichever link was followed; a triage guess search did not
   * list gets a note of its own */
  function carryNotes(out, above) {
    var notes = new Map();
    out.querySelectorAll("a.entry-link[data-group]").forEach(function (a) {
      if (!notes.has(a.dataset.id)) notes.set(a.dataset.id, a.dataset.group);
    });
    out.querySelectorAll("a[data-id]:not([data-group])").forEach(function (a) {
      var id = a.dataset.id;
      if (notes.has(id)) a.dataset.group = notes.get(id);
      else if (a.dataset.unconfirmed && !above.some(function (r) { return r.id === id; })) {  // not search's answer
        var entry = { id: id, title: a.textContent.slice(id.length + 1) };
        a.dataset.group = JSON.stringify({ kind: a.dataset.unconfirmed, entries: [entry],
          above: above.filter(function (r) { return r.id !== id; }).map(function (r) { return { id: r.id, title: r.title }; }) });
      }
    });
  }
  function storage() { try { return window.sessionStorage; } catch (e) { return null; } }
  /* a click on an unconfirmed result: the entry page it opens says so (see markEntryPage) */
  function notePick(a) {
    var store = storage();
    if (!store) return;
    if (!a.dataset.group) { store.removeItem(PICK); return; }
    var group = JSON.parse(a.dataset.group);
    store.setItem(PICK, JSON.stringify({ id: a.dataset.id, kind: group.kind, entries: group.entries, above: group.above,
                                         depth: 1 }));
  }

  /* the diagnosis as Markdown, for an issue tracker or a chat (present.js words it as kb does): the answer, or a
   * differential's evidence line and every candidate with its sign, fix and link */
  function entryUrl(id) {
    var url = new URL(root + id + "/index.html", window.location.href);
    /* a file:// path would carry the reader's home folder, and `kb site serve`'s loopback address means nothing to
     * whoever reads the issue: both name the entry (`kb show ID`) instead */
    var local = /^(localhost|127(\.\d+){3}|\[::1\]|0\.0\.0\.0)$/.test(url.hostname);
    return /^https?:$/.test(url.protocol) && !local ? url.href : null;
  }
  function diagnosis(response, ranks, words) {
    var lead = ranks && ranks.sole_culprit !== null ? "Rank " + ranks.sole_culprit + " broke first: " + ranks.reason + ".\n\n" : "";
    return lead + window.TrainkbPresent.diagnosis(response, words, entryUrl);
  }
  function copyDiagnosis(response, ranks, words) {
    var button = el("button", "copy-diagnosis", "Copy diagnosis");
    button.type = "button";
    button.title = "Copy a Markdown summary (entry, evidence line, fix, link) for an issue or a chat";
    button.addEventListener("click", function () {
      window.TrainkbCopy(diagnosis(response, ranks, words), button, "Copy diagnosis");
    });
    return button;
  }

  var searched = null;  // the text the shown results answer: a paste into a box still holding it starts afresh
  function runPaste(scroll) {
    var text = pasteInput.value;
    remember("paste", text);
    if (!text.trim()) { pasteOut.textContent = ""; searched = null; return Promise.resolve(); }
    return ready().then(function (search) {
      pasteOut.textContent = "";
      searched = text;
      var response = search.paste(text, 5), shown = search.view(response), ranks = search.triage(text);
      var seen = new Set(), group = unconfirmedGroup(shown);
      var leads = shown.rows.slice(0, shown.leads).map(function (row) { return row.result; });
      if (ranks) pasteOut.appendChild(triageBlock(ranks));
      if (shown.kind === "differential") {
        pasteOut.appendChild(differential(shown, seen, search.pages));
        var others = shown.rows.slice(shown.leads);
        if (others.length) {
          pasteOut.appendChild(el("p", "verdict others", shown.also_ranked + ":"));
          pasteOut.appendChild(resultList(others, false, null, seen));
        }
      } else {
        /* an answer needs no headline: the query's kind, then the answer first */
        pasteOut.appendChild(el("p", "verdict", shown.headline || "Read as a " + response.query_kind + "."));
        if (shown.advice) pasteOut.appendChild(linkIds(codeSpans("p", "advice", shown.advice), search.pages));
        if (shown.rows.length) pasteOut.appendChild(resultList(shown.rows, false, response.why, seen));
      }
      if (shown.kind === "differential") {
        markUnconfirmed(pasteOut.querySelector(".differential"), group, "candidate");
        var rest = pasteOut.querySelector(".others + ol");
        if (rest) markUnconfirmed(rest, shown.rows.slice(shown.leads).map(function (row) { return row.result; }), "closest", leads);
      } else {
        markUnconfirmed(pasteOut, group, "closest", leads);
        if (shown.kind === "answer" && shown.rows[0].label === "medium") markUnconfirmed(pasteOut, leads, "medium");
      }
      pasteOut.querySelectorAll(".fix-line").forEach(function (fix) { linkIds(fix, search.pages); });  // D25's "(M8)"
      carryNotes(pasteOut, leads);
      var tools = el("p", "result-tools");
      tools.appendChild(copyDiagnosis(response, ranks, search.words));
      pasteOut.insertBefore(tools, pasteOut.firstChild);
      if (scroll === true) pasteOut.scrollIntoView({ block: "start" });  // the answer, not the box, fills the screen
    }, showBroken(pasteOut));
  }
  if (pasteForm) {
    pasteForm.addEventListener("submit", function (event) { event.preventDefault(); runPaste(true); });
    pasteInput.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); runPaste(true); }
    });
    pasteInput.addEventListener("paste", function (event) {  // searches on its own
      var text = (event.clipboardData || window.clipboardData).getData("text");
      /* a crash replaces the last one rather than joining it, and so does any paste into a box that still holds
       * the text the shown results answer; a few words pasted into what is being typed join it */
      if (looksPasted(text) || (searched !== null && pasteInput.value === searched)) {
        event.preventDefault();
        pasteInput.value = text;
      }
      setTimeout(function () { runPaste(true); }, 0);
    });
    pasteOut.addEventListener("click", function (event) {
      var a = event.target.closest && event.target.closest("a[data-id]");
      if (a) notePick(a);
    });
    pasteInput.addEventListener("focus", ready, { once: true });
  }

  /* (b) the header box: full text, results under the box (or in the page on the search page) */
  var box = document.getElementById("q"), boxForm = document.getElementById("header-search");
  var pageOut = document.getElementById("find-results");
  var dropOut = document.getElementById("q-results");
  function showFind(query) {
    var out = pageOut || dropOut;
    remember("q", query);
    if (!query.trim()) { out.textContent = ""; if (!pageOut) dropOut.hidden = true; return Promise.resolve(); }
    return ready().then(function (search) {
      out.textContent = "";
      var hits = search.fullText(query);
      if (!pageOut) dropOut.hidden = false;
      if (!hits.length) { out.appendChild(el("p", null, "Nothing found.")); return; }
      var list = el("ol");
      hits.slice(0, pageOut ? 20 : 8).forEach(function (hit) {
        var p = search.pages[hit[0]], li = el("li");
        li.appendChild(entryLink(p.id, p.title));
        var fix = codeSpans("span", "why", p.fix_summary);
        fix.insertBefore(el("strong", null, "Fix: "), fix.firstChild);
        li.appendChild(fix);
        list.appendChild(li);
      });
      out.appendChild(list);
    }, showBroken(out));
  }
  function searchPage(hash) { window.location.href = root + "search/index.html#" + hash; }
  if (box) {
    box.addEventListener("focus", ready, { once: true });
    box.addEventListener("input", function () { showFind(box.value); });
    box.addEventListener("paste", function (event) {
      var text = (event.clipboardData || window.clipboardData).getData("text");
      if (!looksPasted(text)) return;
      event.preventDefault();  // a traceback goes to the paste search, whole
      if (pasteInput) { pasteInput.value = text; dropOut.hidden = true; runPaste(true); return; }
      var store = storage();  // the paste travels in this tab's storage, never in the address bar
      if (store) { store.setItem(HANDOFF, text); searchPage("paste"); }
    });
    boxForm.addEventListener("submit", function (event) {
      event.preventDefault();
      if (pageOut) showFind(box.value); else searchPage("q=" + encodeURIComponent(box.value));
    });
    /* the list under the box by keyboard: Down/Up move through it, Enter opens, Esc closes it and returns to the box */
    function dropLinks() { return dropOut && !dropOut.hidden ? Array.from(dropOut.querySelectorAll("a")) : []; }
    box.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && dropOut) {
        if (!dropOut.hidden) { event.preventDefault(); dropOut.hidden = true; } else box.blur();
      } else if (event.key === "ArrowDown" && dropLinks().length) {
        event.preventDefault();
        dropLinks()[0].focus();
      }
    });
    if (dropOut) {
      dropOut.addEventListener("keydown", function (event) {
        var links = dropLinks(), at = links.indexOf(document.activeElement);
        if (event.key === "ArrowDown" || event.key === "ArrowUp") {
          event.preventDefault();
          var next = at + (event.key === "ArrowDown" ? 1 : -1);
          if (next < 0) box.focus(); else links[Math.min(next, links.length - 1)].focus();
        } else if (event.key === "Escape") {
          event.preventDefault();
          dropOut.hidden = true;
          box.focus();
        }
      });
    }
    document.addEventListener("click", function (event) {  // a click elsewhere closes the list under the box
      if (dropOut && !boxForm.contains(event.target)) dropOut.hidden = true;
    });
  }
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    /* the paste box keeps focus after a paste while the page shows the results: "/" there is the shortcut too */
    var away = event.target === pasteInput && pasteInput.getBoundingClientRect().bottom <= 0;
    if (event.key === "/" && box && (away || (tag !== "input" && tag !== "textarea")) && !event.ctrlKey && !event.metaKey) {
      event.preventDefault();
      box.focus();
      box.select();
    }
  });

  /* what to show on arrival: the history entry's last search (Back), else a paste handed over from another
   * page's header box (#paste, the text in sessionStorage), else the link's #q= / ?q= */
  function restore() {
    var state = history.state || {}, hash = new URLSearchParams(window.location.hash.slice(1));
    var q = state.q !== undefined ? state.q : hash.get("q") || new URLSearchParams(window.location.search).get("q");
    var paste = state.paste, store = storage(), handed = false;
    if (paste === undefined && hash.has("paste") && pasteInput) {
      paste = hash.get("paste") || (store && store.getItem(HANDOFF)) || "";  // an old link's text still opens
      if (store) store.removeItem(HANDOFF);
      history.replaceState(state, "", window.location.pathname + window.location.search);  // no paste in the URL
      handed = true;
    }
    var shown = [];
    if (paste && pasteInput) { pasteInput.value = paste; shown.push(runPaste(handed)); }
    if (q && box) { box.value = q; if (pageOut) shown.push(showFind(q)); }
    /* the browser puts the old scroll position back before the results are rebuilt, into a shorter page, so Back
     * landed past them: the position is kept in the history entry and set again once they are there */
    if (pasteInput || pageOut) {
      if ("scrollRestoration" in history) history.scrollRestoration = "manual";
      var at = state.scroll;
      if (typeof at === "number" && !handed) {
        Promise.all(shown).then(function () { window.scrollTo(0, at); }, function () { return null; });
      }
      var pending = null;
      window.addEventListener("scroll", function () {
        clearTimeout(pending);
        pending = setTimeout(function () { remember("scroll", window.scrollY); }, 150);
      }, { passive: true });
      window.addEventListener("pagehide", function () { remember("scroll", window.scrollY); });
      document.addEventListener("click", function (event) {
        if (event.target.closest && event.target.closest("a[href]")) remember("scroll", window.scrollY);
      }, true);
    }
  }
  restore();

  function backToResults(pick) {
    var back = el("a", "back-to-results", "\u2190 Back to all the results");
    back.href = root + "index.html";
    back.addEventListener("click", function (event) {
      if (history.length > (pick.depth || 1)) { event.preventDefault(); history.go(-(pick.depth || 1)); }
    });
    var p = el("p");
    p.appendChild(back);
    return p;
  }
  /* a page opened from a medium answer carries that mark too: the answer, but not a certain one */
  function markMedium(id, pick) {
    var note = el("aside", "confidence-note");
    note.setAttribute("aria-label", "Medium confidence");
    var head = el("p");
    head.appendChild(el("strong", null, "Medium confidence: "));
    head.appendChild(document.createTextNode(id + " is the search's answer to your paste, but not a certain one; " +
      "check that what this page describes matches what you saw."));
    note.appendChild(head);
    note.appendChild(backToResults(pick));
    var fix = document.getElementById("fix");
    fix.insertBefore(note, fix.firstChild);
  }
  /* an entry page opened from an unconfirmed result says so, with the other candidates one click away,
   * until the reader moves on: the note lives in this history entry (Back and reload keep it), not in the URL */
  function markEntryPage() {
    var article = document.querySelector("article.entry"), idNode = document.querySelector("article.entry h1 .id");
    if (!article || !idNode) return;
    var id = idNode.textContent.trim(), store = storage(), state = history.state || {}, pick = null;
    var handed = store && store.getItem(PICK);
    if (handed) {
      store.removeItem(PICK);
      try { pick = JSON.parse(handed); } catch (e) { pick = null; }
      if (pick && pick.id === id) history.replaceState(Object.assign({}, state, { unconfirmed: pick }), "");
      else pick = null;
    }
    if (!pick && state.unconfirmed && state.unconfirmed.id === id) pick = state.unconfirmed;
    if (!pick) return;
    if (pick.kind === "medium") { markMedium(id, pick); return; }
    var others = pick.entries.filter(function (e) { return e.id !== id; }), n = pick.entries.length;
    var note = el("aside", "unconfirmed-note");
    note.setAttribute("aria-label", "Unconfirmed");
    var head = el("p");
    head.appendChild(el("strong", null, "Unconfirmed: "));
    head.appendChild(document.createTextNode(pick.kind === "candidate"
      ? id + " is one of " + n + " candidates for your paste; nothing in it singled this one out."
      : id + " is " + (n > 1 ? "one of the " + n + " closest entries" : "the closest entry") +
        " to your paste, not a confirmed answer."));
    note.appendChild(head);
    var above = (pick.above || []).filter(function (e) { return e.id !== id; });
    if (above.length) {  // what the search put first: the answer, or the candidates, above this one
      var first = el("ul");
      above.forEach(function (e) { var li = el("li"); li.appendChild(entryLink(e.id, e.title)); first.appendChild(li); });
      note.appendChild(el("p", null, above.length > 1
        ? "Ranked above it, the candidates:" : "The search's answer, ranked above it:"));
      note.appendChild(first);
    }
    if (others.length) {
      var list = el("ul");
      others.forEach(function (e) {
        var li = el("li"), a = entryLink(e.id, e.title);
        a.addEventListener("click", function () {
          if (store) store.setItem(PICK, JSON.stringify(Object.assign({}, pick, { id: e.id, depth: (pick.depth || 1) + 1 })));
        });
        li.appendChild(a);
        list.appendChild(li);
      });
      note.appendChild(el("p", null, pick.kind === "candidate" ? "The other candidates:" : "The others:"));
      note.appendChild(list);
    }
    note.appendChild(backToResults(pick));
    var fix = document.getElementById("fix");
    fix.insertBefore(note, fix.firstChild);  // inside the card: landing on #fix shows it first
    fix.classList.add("unconfirmed");
  }
  markEntryPage();

  /* for tests and the console: the same calls the boxes make, once the index has loaded */
  window.TrainkbSearch = {
    ready: function () { return ready().then(function (search) { Object.assign(window.TrainkbSearch, search); }); },
    runPaste: runPaste, showFind: showFind,
  };
})();
