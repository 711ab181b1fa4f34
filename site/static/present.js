/* What a search response shows: the view of src/trainkb/_present.py, which `kb search`, `kb run`, the hook
 * and the TUI render. Its words come from the site's index (TRAINKB_INDEX.present, written by
 * trainkb._present.present_contract); this file applies the same rules to them: the status's headline, what
 * each result is (the answer's confidence, a candidate, or only the closest), which results show their fix
 * (the answer's and each candidate's) and the advice line. tests/test_present.py holds it to the Python view. */
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

  var api = { view: view };
  root.TrainkbPresent = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
