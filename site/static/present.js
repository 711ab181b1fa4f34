/* What a search response shows: the view of src/trainkb/_present.py, which `kb search`, `kb run`, the hook
 * and the TUI render. Its words come from the site's index (TRAINKB_INDEX.present, written by
 * trainkb._present.present_contract); this file applies the same rules to them: the status's headline, what
 * each result is (the answer's confidence, a candidate, or only the closest), which results show their fix
 * (the answer's and each candidate's), the advice line and the Markdown a "copy diagnosis" puts on the
 * clipboard. tests/test_present.py holds it to the Python view. */
(function (root) {
  "use strict";
  function kind(response, words) {
    if (response.status === "answered" && response.results.length) return "answer";
    if (response.status === "differential" && response.candidates) return "differential";
    if (response.results.length) return "closest";
    return (response.advice || "").startsWith(words.foreign_mark) ? "foreign" : "empty";
  }
  function label(k, response, position) {
    var r = response.results[position];
    if (k === "answer" && position === 0 && r.confidence !== "low") return r.confidence;
    if (k === "differential" && position < response.candidates) return "candidate";
    return "closest";
  }
  /* {kind, headline, title, rows: [{result, label, label_text, shows_fix}], leads, advice, also_ranked} */
  function view(response, words) {
    var k = kind(response, words);
    var rows = response.results.map(function (r, i) {
      var l = label(k, response, i);
      return { result: r, label: l, label_text: words.labels[l], shows_fix: l !== "closest" && !!r.fix_summary };
    });
    return {
      kind: k,
      headline: words.headlines[k],
      title: words.titles[k],
      rows: rows,
      leads: k === "answer" ? 1 : k === "differential" ? response.candidates : 0,
      advice: response.advice ? words.advice_lead + " " + response.advice : null,
      also_ranked: words.also_ranked,
    };
  }

  /* one line as kb's printable() writes it: control characters spelled out, never obeyed */
  function line(text) {
    return String(text).replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, function (c) {
      var code = c.charCodeAt(0);
      return code < 0x100 ? "\\x" + ("0" + code.toString(16)).slice(-2) : "\\u" + ("000" + code.toString(16)).slice(-4);
    });
  }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, key) { return values[key]; });
  }
  var MD_CODE_CHARS = 200;
  function mdCode(text) {
    var cut = text.length <= MD_CODE_CHARS ? text : text.slice(0, MD_CODE_CHARS) + "\u2026";
    var longest = Math.max.apply(null, [0].concat((cut.match(/`+/g) || []).map(function (run) { return run.length; })));
    var fence = "`".repeat(longest + 1), pad = longest ? " " : "";
    return fence + pad + cut + pad + fence;
  }
  function mdEvidence(result, d) {
    var lines = result.evidence.filter(function (e) { return e.via === "signature"; });
    var ev = (lines.length ? lines : result.evidence)[0];
    return ev ? "- " + fill(d.evidence, { line: ev.line }) + " " + mdCode(line(ev.text.trim())) : null;
  }
  function mdRow(row, d, link, evidence, said) {
    var r = row.result;
    var status = row.label === "high" || row.label === "medium" ? fill(d.answer_status, { label: row.label_text }) : row.label_text;
    var lines = ["**" + r.id + ": " + line(r.title) + "** (" + status + ")"];
    var quoted = evidence ? mdEvidence(r, d) : null;
    if (quoted) lines.push(quoted);
    if (r.tell && !(r.tell.fired && said.indexOf(r.tell.says) >= 0)) lines.push("- " + (r.tell.fired ? d.seen : d.look) + " " + line(r.tell.says));
    if (row.shows_fix) lines.push("- " + d.fix + " " + line(r.fix_summary));
    lines.push("- " + d.entry + " " + (link(r.id) || fill(d.unlinked, { id: r.id })));
    return lines.join("\n");
  }
  /* the response as Markdown for an issue tracker or a chat: trainkb._present.diagnosis, the same words and rules */
  function diagnosis(response, words, link) {
    var shown = view(response, words), d = words.diagnosis, differential = shown.kind === "differential";
    var head = shown.kind === "answer"
      ? [fill(d.answer, { label: shown.rows[0].label_text }) + (response.why ? ": " + line(response.why) : "")]
      : [fill(d.lead, { headline: shown.headline })];
    var listed = shown.leads ? shown.rows.slice(0, shown.leads) : shown.rows.slice(0, 1);
    var quoted = differential ? mdEvidence(listed[0].result, d) : null;
    if (quoted) head.push(quoted);  // the line the candidates share, once
    var said = shown.kind === "answer" ? response.why || "" : "";  // the answer's why, which may quote its sign
    var parts = [head.join("\n")].concat(listed.map(function (row, i) {
      return mdRow(row, d, link, !differential, i === 0 ? said : "");
    }));
    if (shown.advice) parts.push(line(shown.advice));
    return parts.join("\n\n") + "\n";
  }

  var api = { view: view, diagnosis: diagnosis };
  root.TrainkbPresent = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
