/* The site's search and triage engines under Node, for tests/site/test_node_parity.py.
 *
 *   node node_engines.js SEARCH_INDEX_JS STATIC_DIR
 *
 * Loads the search-index.js a site build writes and STATIC_DIR's engine.js and triage.js unchanged,
 * then answers one JSON line per request line on stdin:
 *   {"id": 3, "op": "search", "text": "...", "top": 10, "first_line": 1} -> {"id": 3, "result": {...}}
 *     ("output": the whole output the text is the tail of, as kb run passes it, when present)
 *   {"id": 4, "op": "triage", "text": "..."}                             -> {"id": 4, "result": {...} | null}
 *   {"id": 5, "op": "rule", "name": "confidence", "args": [...]}        -> {"id": 5, "result": ...}
 * (one of engine.js's rule functions called on its own, with evidence and messages as plain objects;
 * a rule that returns evidence answers with the evidence's "id"s), and
 * {"id": N, "error": "..."} when an engine throws, so one bad input does not end the run.
 * The calls are the ones site/static/search.js makes for the paste box.
 */
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

const [indexFile, staticDir] = process.argv.slice(2);
// the one browser global these scripts touch: search-index.js assigns window.TRAINKB_INDEX
globalThis.window = globalThis;
vm.runInThisContext(fs.readFileSync(indexFile, "utf8"), { filename: indexFile });
const { Engine, round1 } = require(path.resolve(staticDir, "engine.js"));
const { triage } = require(path.resolve(staticDir, "triage.js"));
const engine = new Engine(window.TRAINKB_INDEX.search);

const ids = (evidence) => evidence.map((e) => e.id);
// rule name -> how the request's args reach it
const RULES = {
  confidence: (score, runnerUp, cause) => engine.confidence(score, runnerUp, cause),
  round1: (x) => round1(x),
  combined: (signature, prose, capped) => engine.combined(signature, prose, capped),
  hitsOnFailure: (own, exact, fuzzy) => ids(engine.hitsOnFailure(own, exact, fuzzy)),
  onTheFailure: (evidence, paste) => ids(engine.onTheFailure(evidence, paste)),
  symptomMessages: (witnesses, paste) => engine.symptomMessages(witnesses, paste),
  fires: (tell, lines) => engine.fires(tell, lines),
};

function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, error: "unreadable request: " + error.message };
  }
  try {
    if (request.op === "search") {
      return { id: request.id, result: engine.search(request.text, request.top, request.first_line, request.output) };
    }
    if (request.op === "triage") return { id: request.id, result: triage(request.text, engine) };
    if (request.op === "rule" && Object.hasOwn(RULES, request.name)) {
      return { id: request.id, result: RULES[request.name](...request.args) };
    }
    return { id: request.id, error: "unknown op " + JSON.stringify(request.op) };
  } catch (error) {
    return { id: request.id, error: String(error && error.stack || error) };
  }
}

let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  pending += chunk;
  let end;
  while ((end = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, end);
    pending = pending.slice(end + 1);
    if (line.trim()) process.stdout.write(JSON.stringify(answer(line)) + "\n");
  }
});
