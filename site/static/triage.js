/* Multi-rank triage in the browser, ported from src/trainkb/ranklog/ (_read.py, _decide.py).
 *
 * Reads a pasted combined log line by line (the Python reader's chunked scan is a speed-up that
 * sees the same lines), names the rank that broke first and the ranks that only suffered it.
 * Files, error.json and --log-dir folders are for `kb triage`; the paste box has only text.
 * tests/site/test_node_parity.py (under Node) and test_parity.py (in Chromium) check that both agree on
 * every captured fixture and on seeded variations of them.
 */
(function (root) {
  "use strict";
  /* Python's str is Unicode-aware: \d is any decimal digit, \s any str.isspace() character. num() reads
   * digits as int() does and pyStrip() strips as str.strip() does; the rules' regexes arrive already
   * spelt as JavaScript "u" regexes of Python's meaning (src/trainkb/search/_jsregex.py). */
  var SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var DIGIT = /\p{Nd}/u, ASCII_INT = /^-?[0-9]+$/;
  function num(digits) {
    if (ASCII_INT.test(digits)) return +digits;
    var n = 0, sign = 1;
    Array.from(digits).forEach(function (d, i) {
      if (i === 0 && d === "-") { sign = -1; return; }
      var cp = d.codePointAt(0), zero = cp;  // Unicode's decimal digits come in runs of ten, 0 to 9
      while (DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
      n = n * 10 + (cp - zero) % 10;
    });
    return sign * n;
  }
  var LEADING = new RegExp("^[" + SPACE + "]+", "u"), TRAILING = new RegExp("[" + SPACE + "]+$", "u");
  function pyStrip(text) { return text.replace(LEADING, "").replace(TRAILING, ""); }
  var SPLITLINES = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;  // str.splitlines()

  /* The rules: every pattern, limit, word list and sentence comes from the search index's triage part
   * (window.TRAINKB_INDEX.search.triage), which src/trainkb/search/contract.py writes from the objects
   * `kb triage` runs (src/trainkb/ranklog/_rules.py); this file holds the algorithm only. A version or
   * field this file does not find is an Error, never a triage with undefined rules. */
  var RULES_VERSION = 3;
  var RULES = {
    read: ["context_chars", "max_events", "tail_lines", "max_summary_lines", "max_inferred_rank", "last_line_chars",
           "error_chars", "max_prefixes", "keywords", "prefix", "nccl_rank", "exc", "summary_field", "summary_rank", "exitcode", "sent",
           "watchdog", "enqueued", "fingerprint", "signal_trace", "fatal", "iso", "glog", "timeout", "connection",
           "mismatch", "barrier", "wrappers", "summary_start", "summary_root", "summary_end",
           "mismatch_report", "watchdog_end", "no_error_file", "summary_traceback", "summary_indent"],
    decide: ["tie_seconds", "victim_kinds", "waited", "timed_out", "frame", "aborted", "gloo", "nccl", "signal", "killed", "some_signal", "no_majority_ranks",
             "launcher_signal", "launcher_exitcode", "library_paths", "call_site", "call_code", "suspect_site",
             "suspect_sites", "sites_joiner", "tee_tags", "how", "basis", "tips"],
    tips: ["no_majority", "tie", "barrier", "ended_first", "all_victims", "flight_recorder", "detail", "stack", "summary",
           "tee", "record"]
  };
  var loaded = null;
  var CONTEXT_CHARS, MAX_EVENTS, TAIL_LINES, MAX_SUMMARY_LINES, MAX_INFERRED_RANK, LAST_LINE_CHARS, ERROR_CHARS, MAX_PREFIXES;
  var GLOO, NCCL, SIGNAL, KILLED, ABORTED, KEYWORDS, PREFIX, PREFIX_ANY, NCCL_RANK, EXC, SUMMARY_FIELD, SUMMARY_RANK, EXITCODE, SENT, WATCHDOG, ENQUEUED;
  var FINGERPRINT, SIGNAL_TRACE, FATAL, ISO, GLOG, TIMEOUT, CONNECTION, MISMATCH, BARRIER, FRAME;
  var SUMMARY_START, SUMMARY_ROOT, SUMMARY_END, MISMATCH_REPORT, WATCHDOG_END, NO_ERROR_FILE, SUMMARY_TRACEBACK, SUMMARY_INDENT;
  var SOME_SIGNAL, LAUNCHER_SIGNAL, LAUNCHER_EXITCODE, LIBRARY_PATHS, CALL_SITE, CALL_CODE, SUSPECT_SITE, SUSPECT_SITES;
  var SITES_JOINER, TEE_TAGS, NO_MAJORITY_RANKS;
  var WRAPPERS, VICTIM_KINDS, WAITED, TIMED_OUT, TIE_SECONDS, HOW, BASIS, TIPS;
  function set(list) { var out = {}; list.forEach(function (k) { out[k] = 1; }); return out; }
  function load() {
    var index = root.TRAINKB_INDEX, data = index && index.search ? index.search.triage : undefined;
    var rebuild = " Rebuild the site with the trainkb that ships this triage.js (`kb site build`).";
    if (data === loaded) return;
    if (data === null || typeof data !== "object") throw new Error("trainkb triage: the site's search index has no triage rules." + rebuild);
    if (data.version !== RULES_VERSION) {
      throw new Error("trainkb triage out of date: triage.js reads rules version " + RULES_VERSION +
                      " but the site's search index has version " + data.version + "." + rebuild);
    }
    var missing = [];
    [["read", data.read], ["decide", data.decide], ["tips", data.decide && data.decide.tips]].forEach(function (part) {
      RULES[part[0]].forEach(function (name) {
        if (!part[1] || typeof part[1] !== "object" || !Object.prototype.hasOwnProperty.call(part[1], name)) missing.push(part[0] + "." + name);
      });
    });
    if (missing.length) throw new Error("trainkb triage out of date: the site's triage rules lack " + missing.join(", ") + "." + rebuild);
    var r = data.read, d = data.decide;
    function re(pair, extra) { return new RegExp(pair[0], pair[1] + (extra || "")); }
    CONTEXT_CHARS = r.context_chars; MAX_EVENTS = r.max_events; TAIL_LINES = r.tail_lines;
    MAX_SUMMARY_LINES = r.max_summary_lines; MAX_INFERRED_RANK = r.max_inferred_rank;
    LAST_LINE_CHARS = r.last_line_chars; ERROR_CHARS = r.error_chars; MAX_PREFIXES = r.max_prefixes;
    KEYWORDS = re(r.keywords);
    PREFIX = new RegExp("^(?:" + r.prefix[0] + ")", r.prefix[1]);  // re.match: at the start only
    PREFIX_ANY = re(r.prefix);
    NCCL_RANK = re(r.nccl_rank); EXC = re(r.exc); SUMMARY_FIELD = re(r.summary_field); SUMMARY_RANK = re(r.summary_rank);
    EXITCODE = re(r.exitcode); SENT = re(r.sent); WATCHDOG = re(r.watchdog); ENQUEUED = re(r.enqueued);
    FINGERPRINT = re(r.fingerprint, "g"); SIGNAL_TRACE = re(r.signal_trace); FATAL = re(r.fatal);
    ISO = re(r.iso); GLOG = re(r.glog); TIMEOUT = re(r.timeout); CONNECTION = re(r.connection);
    MISMATCH = re(r.mismatch); BARRIER = re(r.barrier); WRAPPERS = set(r.wrappers);
    SUMMARY_START = r.summary_start; SUMMARY_ROOT = r.summary_root; SUMMARY_END = r.summary_end;
    MISMATCH_REPORT = r.mismatch_report; WATCHDOG_END = r.watchdog_end; NO_ERROR_FILE = r.no_error_file;
    SUMMARY_TRACEBACK = r.summary_traceback; SUMMARY_INDENT = r.summary_indent;
    TIE_SECONDS = d.tie_seconds; VICTIM_KINDS = d.victim_kinds; WAITED = d.waited; TIMED_OUT = d.timed_out;
    FRAME = re(d.frame); ABORTED = re(d.aborted); GLOO = re(d.gloo); NCCL = re(d.nccl); SIGNAL = re(d.signal); KILLED = d.killed; HOW = d.how; BASIS = d.basis; TIPS = d.tips;
    SOME_SIGNAL = d.some_signal; LAUNCHER_SIGNAL = d.launcher_signal; LAUNCHER_EXITCODE = d.launcher_exitcode;
    LIBRARY_PATHS = d.library_paths; CALL_SITE = d.call_site; CALL_CODE = d.call_code; SUSPECT_SITE = d.suspect_site;
    SUSPECT_SITES = d.suspect_sites; SITES_JOINER = d.sites_joiner; TEE_TAGS = d.tee_tags;
    NO_MAJORITY_RANKS = d.no_majority_ranks;
    loaded = data;
  }

  function cpLen(text) { return Array.from(text).length; }
  function classify(message) {
    if (MISMATCH.test(message)) return "mismatch";
    if (BARRIER.test(message)) return "barrier";
    if (CONNECTION.test(message)) return "connection";
    if (TIMEOUT.test(message)) return "timeout";
    return "exception";
  }
  /* datetime(y, mo, d, h, mi, s, micro, tzinfo=UTC).timestamp(), or null where datetime refuses the date */
  function utc(y, mo, d, h, mi, s, micro) {
    if (y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return null;
    var t = new Date(0);
    t.setUTCFullYear(y, mo - 1, d);  // Date.UTC would read the years 0-99 as 1900-1999
    t.setUTCHours(h, mi, s, 0);
    if (t.getUTCMonth() !== mo - 1 || t.getUTCDate() !== d) return null;
    return (t.getTime() * 1000 + micro) / 1e6;  // whole microseconds over 10**6, as timedelta.total_seconds()
  }
  /* the first six digits, padded with zeros to six: microseconds (counted in code points, as Python slices) */
  function digits6(digits) {
    var cps = Array.from(digits).slice(0, 6);
    while (cps.length < 6) cps.push("0");
    return cps.join("");
  }
  function stamp(text, year) {
    var m = ISO.exec(text);
    if (m) return utc(num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(m[6]), num(digits6(m[7] || "0")));
    m = GLOG.exec(text);
    if (m) return utc(year, num(m[1]), num(m[2]), num(m[3]), num(m[4]), num(m[5]), num(digits6(m[6])));
    return null;
  }

  function Reader() {
    this.ranks = new Map();
    this.rootCause = null;
    this.sent = new Map();
    this.summarySeen = false;
    this.year = new Date().getUTCFullYear();
    this.inSummary = false; this.inRootCause = false; this.summaryTraceback = false;
    this.summaryRank = null; this.summaryTime = null; this.summaryLines = 0;
    this.inferred = new Set();
  }
  Reader.prototype.rank = function (r) {
    var s = this.ranks.get(r);
    if (!s) {
      s = { rank: r, tag: "", lastLine: "", events: [], exitcode: null, pid: null, errorFile: null, seq: {},
            fingerprints: new Map(), tail: [] };
      this.ranks.set(r, s);
    }
    return s;
  };
  function addEvent(state, ev) {
    if (state.events.length >= MAX_EVENTS) return;
    for (var i = 0; i < state.events.length; i++) {
      var e = state.events[i];
      if (e.kind === ev.kind && e.text === ev.text && e.source === ev.source) return;
    }
    state.events.push(ev);
  }
  function pushTail(state, line) {
    state.tail.push(line);
    if (state.tail.length > TAIL_LINES) state.tail.shift();
  }
  function strip(raw) {
    var rank = null, prefixed = false, text = raw;
    for (var i = 0; i < MAX_PREFIXES; i++) {
      var m = PREFIX.exec(text);
      if (!m) break;
      if (m[1] === "rank" || rank === null || !prefixed) rank = num(m[2]);
      prefixed = true;
      text = text.slice(m[0].length);
    }
    return { text: text.replace(/\r+$/, ""), rank: rank, prefixed: prefixed };
  }
  function clip(text, n) { return Array.from(text).slice(0, n).join(""); }  // text[:n]
  function stripPrefixes(line) {
    var out = line;
    for (var i = 0; i < MAX_PREFIXES; i++) { var m = PREFIX_ANY.exec(out); if (!m) break; out = out.slice(0, m.index) + out.slice(m.index + m[0].length); }
    return out;
  }

  Reader.prototype.feed = function (text) {
    var lines = text.split("\n"), starts = [], pos = 0, i;
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    for (i = 0; i < lines.length; i++) { starts.push(pos); pos += cpLen(lines[i]) + 1; }
    for (i = 0; i < lines.length; i++) { var m = PREFIX.exec(lines[i]); if (m) this.rank(num(m[2])); }
    var self = this;
    this.ranks.forEach(function (state, r) {  // the last line of each rank, [defaultN]: first as in _read.py
      var tags = ["[default" + r + "]:", "[rank" + r + "]:"];
      for (var t = 0; t < tags.length; t++) {
        for (var j = lines.length - 1; j >= 0; j--) {
          if (lines[j].startsWith(tags[t])) { state.lastLine = clip(stripPrefixes(lines[j]), LAST_LINE_CHARS); state.tag = tags[t]; return; }
        }
      }
    });
    for (i = 0; i < lines.length; i++) {
      if (self.inSummary) {
        self.summaryLines++;
        if (self.summaryLines > MAX_SUMMARY_LINES) { self.inSummary = false; self.inRootCause = false; }
      } else if (!KEYWORDS.test(lines[i])) {
        continue;
      }
      self.line(lines, starts, i);
    }
  };
  Reader.prototype.line = function (lines, starts, i) {
    var s = strip(lines[i]), text = s.text, rank = s.rank, number = i + 1, m;
    var nccl = NCCL_RANK.exec(text);
    if (rank === null && nccl) rank = num(nccl[1]);
    var when = stamp(text, this.year);
    if (!s.prefixed && this.summary(text, number)) return;
    if ((m = SENT.exec(text))) { this.sent.set(num(m[1]), m[2]); return; }
    if (rank === null) return;
    var state = this.rank(rank);
    if ((m = WATCHDOG.exec(text))) {
      state.seq.seq_num = num(m[1]); state.seq.op = m[2]; state.seq.numel_in = m[3] ? num(m[3]) : null;
      addEvent(state, { kind: "timeout", text: text.slice(m.index).split(WATCHDOG_END)[0], line: number, time: when, source: "nccl" });
    }
    if ((m = ENQUEUED.exec(text))) { state.seq.last_enqueued = num(m[1]); state.seq.last_completed = num(m[2]); }
    this.fingerprints(text, state);
    var exc = LEADING.test(text) ? null : EXC.exec(text);
    if (exc && !WRAPPERS[exc[1].split(".").pop()]) {
      addEvent(state, { kind: classify(text), text: clip(text, ERROR_CHARS), line: number, time: when, source: "log" });
      if (i > 0) {  // _read.py: chunk[lo:start].splitlines()[1:], the context cut at lo less its first (cut) line
        var lo = Math.max(0, starts[i] - CONTEXT_CHARS), k = i - 1, context = "";
        while (starts[k] > lo) context = lines[k--] + "\n" + context;
        context = Array.from(lines[k]).slice(lo - starts[k]).join("") + "\n" + context;
        context.split(SPLITLINES).slice(1, -1).forEach(function (piece) {
          var p = strip(piece);
          if (p.rank === rank) pushTail(state, p.text);
        });
      }
      pushTail(state, text);
    } else if ((m = SIGNAL_TRACE.exec(text)) || (m = FATAL.exec(text))) {
      addEvent(state, { kind: "signal", text: m[0], line: number, time: when, source: "log" });
    }
  };
  /* a DETAIL mismatch names the first rank (in rank order) that differs from the reporter: every
     rank below it, other than the reporter, runs the reporter's collective (_read.py) */
  Reader.prototype.fingerprints = function (text, state) {
    var found = [], m;
    FINGERPRINT.lastIndex = 0;
    while ((m = FINGERPRINT.exec(text)) !== null) {
      found.push([num(m[1]), m[3] + " SequenceNumber=" + (m[2] || "?") + " TensorShape=" + (m[4] || "?")]);
    }
    found.forEach(function (f) { state.fingerprints.set(f[0], f[1]); });
    if (found.length > 1 && text.includes(MISMATCH_REPORT) && !this.inferred.has(found[0][0] + "," + found[1][0])) {
      this.inferred.add(found[0][0] + "," + found[1][0]);
      for (var r = 0; r < Math.min(found[1][0], MAX_INFERRED_RANK); r++) {
        if (!state.fingerprints.has(r)) state.fingerprints.set(r, found[0][1]);
      }
    }
  };
  Reader.prototype.summary = function (text, number) {
    if (text.includes(SUMMARY_ROOT)) {
      this.inSummary = this.inRootCause = this.summarySeen = true;
      return true;
    }
    if (text.startsWith(SUMMARY_START)) { this.inSummary = this.summarySeen = true; this.summaryLines = 0; return true; }
    if (this.inSummary && text.startsWith(SUMMARY_END)) {
      this.inSummary = this.inRootCause = this.summaryTraceback = false;
      this.summaryRank = null;
      return true;
    }
    var m = SUMMARY_FIELD.exec(text), state;
    if (!m) {
      if (this.summaryTraceback && this.summaryRank !== null && text.startsWith(SUMMARY_INDENT)) {
        var t = pyStrip(text);
        if (EXC.test(t) && text[SUMMARY_INDENT.length] !== " ") {
          addEvent(this.rank(this.summaryRank), { kind: classify(t), text: clip(t, ERROR_CHARS), line: number, time: this.summaryTime, source: "summary" });
          this.fingerprints(text, this.rank(this.summaryRank));
          return true;
        }
      }
      return false;
    }
    var key = m[1], value = pyStrip(m[2]), r;
    this.summarySeen = true;
    if (key === "time") {
      this.summaryTime = stamp(value, this.year); this.summaryRank = null; this.summaryTraceback = false;
    } else if (key === "rank" && (r = SUMMARY_RANK.exec(value))) {
      this.summaryRank = num(r[1]);
      this.rank(this.summaryRank);
      if (this.inRootCause && this.rootCause === null) this.rootCause = this.summaryRank;
    } else if (this.summaryRank !== null) {
      state = this.rank(this.summaryRank);
      var e, sg;
      if (key === "exitcode" && (e = EXITCODE.exec(value))) { state.exitcode = num(e[1]); state.pid = num(e[2]); }
      else if (key === "error_file" && value !== NO_ERROR_FILE) state.errorFile = value;
      else if (key === "traceback") {
        this.summaryTraceback = value.startsWith(SUMMARY_TRACEBACK);
        if ((sg = SIGNAL_TRACE.exec(value))) addEvent(state, { kind: "signal", text: sg[0], line: number, time: this.summaryTime, source: "summary" });
      }
    }
    return true;
  };

  /* --- decide (_decide.py) ------------------------------------------------------------------ */
  function signalKind(state, ev, reader) {
    var launcher = state.pid !== null ? reader.sent.get(state.pid) : undefined;
    if (ev.text.includes(LAUNCHER_SIGNAL) || launcher === LAUNCHER_SIGNAL) return "sigterm";
    if (launcher) return "sigterm";
    if (ABORTED.test(ev.text) && state.events.some(function (e) { return VICTIM_KINDS.includes(e.kind); })) return "abort";
    return "signal";
  }
  function classifyRank(state, reader) {
    var own = state.events.filter(function (e) { return e.kind === "exception"; });
    if (own.length) {
      own.sort(function (a, b) { return (a.line === null) - (b.line === null) || (a.line || 0) - (b.line || 0); });
      return ["exception", own[0]];
    }
    var signals = state.events.filter(function (e) { return e.kind === "signal"; })
      .map(function (e) { return [e, signalKind(state, e, reader)]; });
    for (var i = 0; i < signals.length; i++) if (signals[i][1] === "signal") return ["signal", signals[i][0]];
    var kinds = VICTIM_KINDS;  // the most telling first
    for (var k = 0; k < kinds.length; k++) {
      var hit = state.events.filter(function (e) { return e.kind === kinds[k]; });
      if (hit.length) return [kinds[k], hit[0]];
    }
    if (signals.length) return [signals[0][1], signals[0][0]];
    if (state.exitcode !== null && state.exitcode > 0) return ["exited", null];
    if (state.exitcode === LAUNCHER_EXITCODE || (state.pid !== null && reader.sent.has(state.pid))) return ["sigterm", null];
    return ["none", null];
  }
  function eventTime(state, ev) {
    if (ev && ev.time !== null) return ev.time;
    var times = state.events.filter(function (e) { return e.time !== null && (!ev || e.kind === ev.kind); })
      .map(function (e) { return e.time; });
    return times.length ? Math.min.apply(null, times) : null;
  }
  function first(ranks, when) {
    if (ranks.some(function (r) { return when.get(r) === null; })) return ranks;
    var earliest = Math.min.apply(null, ranks.map(function (r) { return when.get(r); }));
    return ranks.filter(function (r) { return when.get(r) - earliest < TIE_SECONDS; });
  }
  function oddOnesOut(ops) {  /* ops: array of [rank, key] in insertion order */
    var counts = new Map();
    ops.forEach(function (o) { counts.set(o[1], (counts.get(o[1]) || 0) + 1); });
    var ranked = Array.from(counts.entries()).sort(function (a, b) { return b[1] - a[1]; });
    if (ranked.length <= 1) return [];
    var all = ops.map(function (o) { return o[0]; }).sort(function (a, b) { return a - b; });
    if (ranked[0][1] === ranked[1][1]) return all;
    return ops.filter(function (o) { return o[1] !== ranked[0][0]; }).map(function (o) { return o[0]; })
      .sort(function (a, b) { return a - b; });
  }

  function decide(reader) {
    if (reader.summarySeen && reader.ranks.size) {  /* a quiet rank below the highest one seen (_decide.py) */
      var top = Math.max.apply(null, Array.from(reader.ranks.keys()));
      for (var q = 0; q < top; q++) reader.rank(q);
    }
    var ranks = Array.from(reader.ranks.keys()).sort(function (a, b) { return a - b; });
    var how = new Map(), shown = new Map(), when = new Map();
    ranks.forEach(function (r) { var c = classifyRank(reader.ranks.get(r), reader); how.set(r, c[0]); shown.set(r, c[1]); });
    ranks.forEach(function (r) { when.set(r, eventTime(reader.ranks.get(r), shown.get(r))); });
    function having(list) { return ranks.filter(function (r) { return list.includes(how.get(r)); }); }
    var own = having(["exception", "signal"]), victims = having(WAITED.concat(["mismatch"]));
    var silent = having(["none", "sigterm"]);
    var endedAlone = silent.filter(function (r) { return how.get(r) === "none"; });
    // a rank that ended on its own while its peers waited comes before one the launcher killed
    if (endedAlone.length) silent = endedAlone;
    var fpMap = new Map(), enqueued = [], watchdog = [];
    ranks.forEach(function (r) {
      var s = reader.ranks.get(r);
      s.fingerprints.forEach(function (op, fr) { fpMap.set(fr, op); });  /* dict.update keeps a key's place */
      if ("last_enqueued" in s.seq) enqueued.push([r, s.seq.last_enqueued]);
      if ("seq_num" in s.seq) watchdog.push([r, s.seq.seq_num + "|" + s.seq.op]);
    });
    var fingerprints = Array.from(fpMap.entries());
    var basis = "none", culprits = [], odd;
    var distinct = new Set(enqueued.map(function (e) { return e[1]; }));
    if (own.length) { basis = "own-error"; culprits = first(own, when); }
    else if ((odd = oddOnesOut(fingerprints)).length) { basis = "mismatch"; culprits = odd; }
    else if (distinct.size > 1) {  // two ranks or more, at different counts
      var low = Math.min.apply(null, enqueued.map(function (e) { return e[1]; }));
      basis = "behind"; culprits = enqueued.filter(function (e) { return e[1] === low; }).map(function (e) { return e[0]; });
    } else if ((odd = oddOnesOut(watchdog)).length) { basis = "behind"; culprits = odd; }
    else if (victims.length && silent.length && victims.some(function (r) { return WAITED.includes(how.get(r)); }) &&
             (how.get(silent[0]) === "none" || victims.some(function (r) { return TIMED_OUT.includes(how.get(r)); }))) {
      basis = "silent"; culprits = silent;
    } else if (!victims.length && having(["exited"]).length) {
      basis = "own-error"; culprits = first(having(["exited"]), when);
    }
    culprits = culprits.slice().sort(function (a, b) { return a - b; });
    var verdicts = ranks.map(function (r) {
      var s = reader.ranks.get(r), ev = shown.get(r), role;
      if (culprits.includes(r)) role = culprits.length === 1 || basis === "own-error" ? "culprit" : "suspect";
      else role = how.get(r) === "none" ? "unharmed" : "victim";
      var h = culprits.includes(r) && (how.get(r) === "none" || how.get(r) === "sigterm") ? "silent" : how.get(r);
      return { rank: r, role: role, how: h, description: HOW[h], error: ev ? ev.text : null, line: ev ? ev.line : null,
               time: when.get(r), exitcode: s.exitcode, collective: Object.keys(s.seq).length ? s.seq : null,
               last_line: s.lastLine };
    });
    var ct = culprits.filter(function (r) { return when.get(r) !== null && ["exception", "signal", "exited"].includes(how.get(r)); })
      .map(function (r) { return when.get(r); });
    var vt = victims.filter(function (r) { return when.get(r) !== null && !culprits.includes(r); })
      .map(function (r) { return when.get(r); });
    var gap = ct.length && vt.length ? Math.round((Math.min.apply(null, vt) - Math.min.apply(null, ct)) * 1000) / 1000 : null;
    var sole = culprits.length === 1 ? culprits[0] : null;
    var rcVictim = reader.rootCause !== null && !culprits.includes(reader.rootCause) &&
      verdicts.some(function (v) { return v.rank === reader.rootCause && v.role === "victim"; });
    var tips = collect(reader, basis, victims, how);
    if (basis === "mismatch" && culprits.length > 1 && culprits.length === NO_MAJORITY_RANKS && ranks.length === NO_MAJORITY_RANKS) {
      var sites = [];
      culprits.forEach(function (r) {  // a rank only others' errors name printed no frame
        var state = reader.ranks.get(r), site = state ? callSite(state) : null;
        if (site) sites.push(SUSPECT_SITE.split("{rank}").join(String(r)).split("{site}").join(site));
      });
      tips.unshift(TIPS.no_majority + (sites.length ? SUSPECT_SITES.split("{sites}").join(sites.join(SITES_JOINER)) : ""));
    } else if (basis === "mismatch" && culprits.length > 1) tips.unshift(TIPS.tie);
    return { culprits: culprits, sole_culprit: sole, basis: basis, reason: reason(basis, sole, verdicts), root_cause_rank: reader.rootCause,
             root_cause_is_victim: rcVictim, gap_seconds: gap, collect: tips, ranks: verdicts };
  }
  /* triage/_report.py reason: why the culprit is named; a signal death is worded as one */
  function reason(basis, sole, verdicts) {
    var v = verdicts.filter(function (x) { return x.rank === sole; })[0];
    if (basis === "own-error" && sole !== null && v && v.how === "signal") {
      var found = SIGNAL.exec(v.error || "");
      return KILLED.split("{signal}").join(found ? found[0] : SOME_SIGNAL);
    }
    return BASIS[basis];
  }
  /* the last frame of the rank's traceback outside torch and site-packages (_decide.py _call_site) */
  function callSite(state) {
    var lines = state.tail;
    for (var i = lines.length - 1; i >= 0; i--) {
      var m = FRAME.exec(lines[i]);
      var path = m ? m[1] : "";
      if (m && !LIBRARY_PATHS.some(function (part) { return path.includes(part); })) {
        var code = i + 1 < lines.length ? pyStrip(lines[i + 1]) : "";
        var site = CALL_SITE.split("{file}").join(path.split("/").pop()).split("{line}").join(m[2]);
        return site + (code ? CALL_CODE.split("{code}").join(code) : "");
      }
    }
    return null;
  }
  /* _decide._gloo: the ranks' errors come from gloo and none from NCCL */
  function gloo(reader) {
    var texts = [];
    reader.ranks.forEach(function (s) { s.events.forEach(function (e) { texts.push(e.text); }); });
    return texts.some(function (t) { return GLOO.test(t); }) && !texts.some(function (t) { return NCCL.test(t); });
  }
  function collect(reader, basis, victims, how) {
    var tips = [], barrier = Array.from(how.values()).includes("barrier");
    if (basis === "none" && barrier) tips.push(TIPS.barrier);
    else if (basis === "none" && Array.from(how.values()).includes("sigterm") &&
             victims.some(function (r) { return how.get(r) === "connection"; })) {
      tips.push(TIPS.ended_first);
    } else if (basis === "none" && victims.length && victims.length === how.size) {
      tips.push(TIPS.all_victims);
    }
    if ((basis === "none" && !barrier) || basis === "silent") {
      if (victims.some(function (r) { return how.get(r) === "timeout"; }) || basis === "none") {
        tips.push(gloo(reader) ? TIPS.stack : TIPS.flight_recorder);
        tips.push(TIPS.detail);
      }
    }
    if (basis === "silent" && Array.from(how.values()).filter(function (h) { return h === "none" || h === "sigterm"; }).length > 1 && !reader.summarySeen) {
      tips.push(TIPS.summary);
    }
    var tagged = false;
    reader.ranks.forEach(function (s) {
      if (TEE_TAGS.some(function (tag) { return s.tag.startsWith(tag); })) tagged = true;
    });
    if (!tagged) tips.push(TIPS.tee);
    var exited = false;
    how.forEach(function (h) { if (h === "exited") exited = true; });
    if (exited) tips.push(TIPS.record);
    return tips;
  }

  /* triage(text, engine?): null unless two or more ranks speak; with an engine, the culprit's entry too */
  function triage(text, engine) {
    load();
    var reader = new Reader();
    reader.feed(String(text || ""));
    var multi = reader.ranks.size > 1 || (reader.summarySeen && reader.ranks.size > 0 &&
      Math.max.apply(null, Array.from(reader.ranks.keys())) >= 1);
    if (!multi) return null;
    var result = decide(reader);
    result.entry = null;
    var explained = result.sole_culprit !== null ? result.sole_culprit
      : result.culprits.length && result.basis === "own-error" ? result.culprits[0] : null;
    result.explained_rank = explained;
    var v = result.ranks.filter(function (x) { return x.rank === explained; })[0];
    if (engine && v && ["exception", "signal", "exited"].includes(v.how) && v.error) {
      var state = reader.ranks.get(v.rank);
      var body = state.tail.length ? state.tail.join("\n") : v.error;
      if (!body.includes(v.error)) body += "\n" + v.error;
      // one rank failed first with its own error: search's first entry for the whole paste, which reads
      // that failure without its peers' lines (_input.explain with the whole paste)
      if (engine.ownFailure(result)) body = String(text || "");
      var response = engine.search(body, 1);
      // a message several causes print still names its closest entry, marked low (unconfirmed)
      if (response.results.length && (!response.abstained || response.symptom !== null)) {
        var best = response.results[0];
        result.entry = { id: best.id, title: best.title, confidence: best.confidence, score: best.score };
      }
    }
    return result;
  }

  /* _ranks.teardown asks whether a teardown line says its rank was aborted (DecideRules.aborted) */
  function aborted(text) { load(); return ABORTED.test(text); }

  var api = { triage: triage, aborted: aborted };
  root.TrainkbTriage = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
