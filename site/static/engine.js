/* trainkb search engine, ported from src/trainkb/search/ (parse -> normalise -> score).
 *
 * Everything that depends on the catalogue or that the Python engine may retune (regexes,
 * thresholds, weights, signature specificity, BM25 postings) comes from the exported index
 * (window.TRAINKB_INDEX.search), whose layout is the engine contract declared in
 * src/trainkb/search/contract.py (docs/search.md); this file only mirrors the algorithm. Keep it
 * in step with _input.py, _normalize.py, _score.py, _tells.py and _search.py: tests/site/test_node_parity.py
 * compares its whole answer with `kb search` on every benchmark case and seeded variations of them,
 * under Node in the quick tests; test_parity.py does the same in Chromium.
 */
(function (root) {
  "use strict";

  /* The engine contract this file reads: its version and every field it relies on. An index of
   * another version, or one lacking a field, is refused with an Error rather than searched wrongly.
   * Bump with ENGINE_CONTRACT_VERSION in src/trainkb/search/contract.py (docs/search.md says when). */
  var CONTRACT_VERSION = 9;
  var CONTRACT = {
    version: CONTRACT_VERSION,
    fields: ["version", "constants", "patterns", "advice", "entries", "sigs", "phrases", "excludes", "tells",
             "aliases", "postings", "idf", "background", "sig_terms", "gate", "ungated", "triage"],
    constants: ["MAX_CHARS", "MAX_LINES", "MAX_LINE_CHARS", "MAX_CONTINUATION", "NEWLINE_SEARCH", "MAX_PREFIXES",
                "ROOT_CAUSE_LINES", "SENTENCE_WORDS", "MIN_DUMP_ITEMS", "FAILURE_WEIGHT", "OTHER_WEIGHT",
                "WRAPPER_WEIGHT", "WRAPPER_TYPES", "RAW_LINE_CHARS", "MIN_OPTIONS", "WARNING_SUFFIX", "WHAT_TYPE",
                "NCCL_TYPE", "QUOTES", "NO_TRACEBACK", "CODE_QUOTES", "RUNS_ON", "STOP", "STEM_SUFFIXES", "STEM_KEEP_CHARS", "STEM_MIN_CHARS",
                "PART_MIN_CHARS", "NAMED_CHARS", "MAX_HITS_PER_SIG", "EXACT_STRENGTH", "FUZZY_STRENGTH",
                "TYPE_BONUS", "MIN_FUZZY_CHARS", "MIN_SHARED_TERMS", "SHARED_TERMS_SHARE", "MIN_LINE_CHARS",
                "MAX_TERM_REPEATS", "FULL_ALIAS_WORDS", "MIN_ALIAS_WORDS", "PROSE_SATURATION", "BM25_SHARE", "COVER_SHARE",
                "EXTRA_SIGNATURE", "OTHER_KIND_SHARE", "MAX_EVIDENCE", "SUBSTITUTION_PENALTY", "FUZZY_FLOOR",
                "PROSE_CANDIDATES", "MAX_QUERY_TERMS", "ALIAS_STRENGTH", "KNOWN_FAILURE", "SOME_EVIDENCE",
                "MAX_TEXT_SEGMENTS", "MAX_MESSAGE_SEGMENTS", "UNKNOWN_ERROR_CAP", "EXCLUDED_CAP", "AMBIGUOUS_SHARE",
                "NOISE_MIN_TERMS", "NOISE_KNOWN_SHARE", "NOISE_MIN_CHARS", "ROLE_WEIGHT", "HIGH", "MEDIUM", "SIGNATURE_LEAD",
                "MIN_SCORE", "ADVICE_MESSAGE_CHARS", "MIN_CANDIDATES", "MAX_CANDIDATES", "WHY_CHARS",
                "WHY_VOUCHED", "MAX_OUTPUT_CHARS",
                "RISE_MIN_POINTS", "RISE_RATIO", "RISE_MAJORITY", "MAX_SERIES", "SIZE_UNITS",
                "BETWEEN_WORDS", "OWN_MARK", "RANKS_NOTE", "RANKS_BEHIND_NOTE", "RANKS_TEARDOWN", "RANKS_SILENT_BASES",
                "RANKS_WAITED", "RANKS_RUN", "RANKS_OWN_NOTE", "RANKS_SIGNAL_NOTE", "RANKS_OWN_BASIS", "RANKS_OWN_HOW",
                "RANKS_SUMMARY_ROOT", "RANKS_ONE", "RANKS_MANY", "RANKS_SPAN", "RANKS_JOINER"],
    patterns: ["ANSI", "CONTROL", "PREFIX", "BOX", "TB_HEADER", "FRAME", "FRAME_START", "CHAIN", "NCCL_LINE",
               "EXC_LINE", "WARN_LINE", "WHAT", "EXC_INLINE", "WRAPPER", "ROOT_CAUSE", "LAUNCHER_FAILED", "FIELD",
               "LOGGY", "SENTENCE", "PROGRESS", "COMMAND", "OPTION", "DUMP_ITEM", "DUMP_START", "SETTING",
               "ENVIRONMENT", "SPACES", "WORD", "TOKEN", "NUMBER", "SIZE_VALUE", "OWN_PREFIX", "MASKS",
               "LIBRARY_FRAME", "TRAINING", "RANKS_BLOCK", "RANKS_BLOCK_RANK", "RANKS_RULE"],
    advice: ["launcher", "symptom", "partial", "symptom_one", "exception", "cut", "log", "prose", "launcher_output",
             "symptom_output", "symptom_one_output", "exception_output", "cut_output", "log_output", "foreign"],
    entries: ["id", "title", "area", "fix_summary"],
    sigs: ["entry", "source", "regex", "literal", "type", "texts", "terms", "required", "numbers", "names", "spec", "ambiguous",
           "names_cause"],
    phrases: ["entry", "text", "alias", "spec", "ambiguous"],
    excludes: ["entry", "regex"],
    tells: ["entry", "says", "when"]
  };

  /* Throws when ``data`` is not an index this engine can read: another contract version, or a field missing. */
  function checkContract(data) {
    var rebuild = " Rebuild the site with the trainkb that ships this engine.js (`kb site build`).";
    if (data === null || typeof data !== "object") {
      throw new Error("trainkb search engine: the site has no search index (search-index.js did not load)." + rebuild);
    }
    if (data.version !== CONTRACT_VERSION) {
      throw new Error("trainkb search engine out of date: engine.js reads index contract version " + CONTRACT_VERSION +
                      " but the site's search index is version " + data.version + "." + rebuild);
    }
    var missing = [];
    function need(object, names, where) {
      if (object === null || typeof object !== "object") return;
      for (var i = 0; i < names.length; i++) {
        if (!Object.prototype.hasOwnProperty.call(object, names[i])) missing.push(where + names[i]);
      }
    }
    need(data, CONTRACT.fields, "");
    ["constants", "patterns", "advice"].forEach(function (table) { need(data[table], CONTRACT[table], table + "."); });
    ["entries", "sigs", "phrases", "excludes", "tells"].forEach(function (list) {
      (Array.isArray(data[list]) ? data[list] : []).forEach(function (item, i) {
        need(item, CONTRACT[list], list + "[" + i + "].");
      });
    });
    if (missing.length) {
      throw new Error("trainkb search engine out of date: the site's search index (contract version " + data.version +
                      ") lacks " + missing.slice(0, 5).join(", ") + (missing.length > 5 ? " and " + (missing.length - 5) +
                      " more" : "") + "." + rebuild);
    }
  }

  function re(spec, extra) {
    return new RegExp(spec[0], spec[1] + (extra || ""));
  }

  /* Python's pattern.match(): anchored at the start of the string. */
  function matchStart(sticky, text) {
    sticky.lastIndex = 0;
    return sticky.exec(text);
  }

  /* Python's str.strip()/rstrip()/isspace() whitespace (JavaScript's \s differs: \x1c-\x1f, \x85, \ufeff) */
  var PY_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  var STRIP = new RegExp("^[" + PY_SPACE + "]+|[" + PY_SPACE + "]+$", "g");
  var RSTRIP = new RegExp("[" + PY_SPACE + "]+$");
  var SPACE_FIRST = new RegExp("^[" + PY_SPACE + "]");
  function pyStrip(text) { return text.replace(STRIP, ""); }
  function pyRstrip(text) { return text.replace(RSTRIP, ""); }

  /* Python indexes a str by code point, JavaScript by UTF-16 unit; they differ only past U+FFFF */
  var SURROGATE = /[\uD800-\uDFFF]/;
  function pyLen(text) {
    if (!SURROGATE.test(text)) return text.length;
    var n = 0;
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      if (c >= 0xD800 && c <= 0xDBFF && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xFC00) === 0xDC00) i++;
      n++;
    }
    return n;
  }
  /* the code-point index of UTF-16 offset i */
  function pyIndex(text, i) { return pyLen(text.slice(0, i)); }
  /* text[:n] by code points */
  function pySlice(text, n) {
    if (text.length <= n || !SURROGATE.test(text)) return text.slice(0, n);
    var units = 0;
    for (var k = 0; k < n && units < text.length; k++) {
      var c = text.charCodeAt(units);
      units += c >= 0xD800 && c <= 0xDBFF && units + 1 < text.length && (text.charCodeAt(units + 1) & 0xFC00) === 0xDC00 ? 2 : 1;
    }
    return text.slice(0, units);
  }
  /* str.isalnum() of one code point (letters and numbers of any script); false for undefined */
  var ALNUM = /^[\p{L}\p{N}]$/u;
  function isAlnum(code) {
    if (code === undefined) return false;
    if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
    return ALNUM.test(String.fromCodePoint(code));
  }
  /* the code point that ends just before UTF-16 offset i */
  function codeBefore(text, i) {
    if (i <= 0) return undefined;
    var low = text.charCodeAt(i - 1);
    if ((low & 0xFC00) === 0xDC00 && i >= 2 && (text.charCodeAt(i - 2) & 0xFC00) === 0xD800) return text.codePointAt(i - 2);
    return low;
  }
  /* int() of a run of decimal digits of any script, as a contract regex's \d finds them (Unicode's decimal
   * digits come in runs of ten, 0 to 9); parseInt reads only ASCII ones */
  var DIGIT = /\p{Nd}/u, ASCII_DIGITS = /^[0-9]+$/, DIGITS = /^\p{Nd}+/u;
  function pyInt(digits) {
    if (ASCII_DIGITS.test(digits)) return parseInt(digits, 10);
    var n = 0;
    Array.from(digits).forEach(function (d) {
      var cp = d.codePointAt(0), zero = cp;
      while (DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
      n = n * 10 + (cp - zero) % 10;
    });
    return n;
  }
  function stripChars(text, chars) {
    var start = 0, end = text.length;
    while (start < end && chars.indexOf(text[start]) >= 0) start++;
    while (end > start && chars.indexOf(text[end - 1]) >= 0) end--;
    return text.slice(start, end);
  }
  function rstripChars(text, chars) {
    var end = text.length;
    while (end > 0 && chars.indexOf(text[end - 1]) >= 0) end--;
    return text.slice(0, end);
  }
  function countChar(text, ch, from, to) {
    var n = 0;
    for (var i = from; i < to; i++) if (text.charCodeAt(i) === ch) n++;
    return n;
  }

  /* ---- normalise (_normalize.py) ---- */

  function Normalizer(C, P) {
    this.masks = P.MASKS.map(function (m) { return [m[0], re([m[1], m[2]], "g")]; });
    this.spaces = re(P.SPACES, "g");
    this.word = re(P.WORD, "g");
    this.token = re(P.TOKEN, "g");
    this.number = re(P.NUMBER, "g");
    this.stop = new Set(C.STOP);
    this.suffixes = C.STEM_SUFFIXES;
    this.keepChars = C.STEM_KEEP_CHARS;
    this.minChars = C.STEM_MIN_CHARS;
    this.partChars = C.PART_MIN_CHARS;
    this.namedChars = C.NAMED_CHARS;
  }
  Normalizer.prototype.normalize = function (line) {
    var out = line;
    for (var i = 0; i < this.masks.length; i++) out = out.replace(this.masks[i][1], this.masks[i][0]);
    return pyStrip(out.replace(this.spaces, " ")).toLowerCase();
  };
  /* stem(): a deliberately crude suffix stripper, by the contract's word rules */
  Normalizer.prototype.stem = function (word) {
    if (word.length <= this.keepChars || word.indexOf("_") >= 0) return word;
    for (var i = 0; i < this.suffixes.length; i++) {
      var s = this.suffixes[i];
      if (word.endsWith(s) && word.length - s.length >= this.minChars) return word.slice(0, -s.length);
    }
    return word;
  };
  Normalizer.prototype.terms = function (text) {
    for (var i = 0; i < 2; i++) text = text.replace(this.masks[i][1], " ");
    var words = text.toLowerCase().match(this.word) || [];
    var out = [];
    for (var j = 0; j < words.length; j++) {
      var word = words[j];
      if (this.stop.has(word)) continue;
      out.push(this.stem(word));
      if (word.indexOf("_") >= 0) {
        var parts = word.split("_");
        for (var k = 0; k < parts.length; k++) {
          if (parts[k].length >= this.partChars && !this.stop.has(parts[k])) out.push(this.stem(parts[k]));
        }
      }
    }
    return out;
  };

  /* content_words(): stemmed whole words, the fixed wording of a message; a long name that only ends in
   * digits ('sqrtbackward0') is compared without them: every such name of a paste, of a signature's text
   * only those in `named` (the index's names of that signature) */
  Normalizer.prototype.contentWords = function (text, named) {
    var tokens = text.toLowerCase().match(this.token) || [], out = [];
    for (var i = 0; i < tokens.length; i++) {
      var t = tokens[i], w = t.replace(/[0-9]+$/, "");
      if (!/^[a-z]+$/.test(w.replace(/_/g, "")) || this.stop.has(w)) continue;
      if (w !== t && (w.length < this.namedChars || (named && !named.has(w)))) continue;
      out.push(this.stem(w));
    }
    return out;
  };

  /* ---- parse a paste (_input.py) ---- */

  function Parser(C, P) {
    this.C = C;
    this.ansi = re(P.ANSI, "g");
    this.control = re(P.CONTROL, "g");
    this.prefix = re(P.PREFIX, "y");
    this.box = re(P.BOX, "g");
    this.tbHeader = re(P.TB_HEADER);
    this.frame = re(P.FRAME, "y");
    this.frameStart = re(P.FRAME_START, "y");
    this.chain = re(P.CHAIN);
    this.excLine = re(P.EXC_LINE, "y");
    this.warnLine = re(P.WARN_LINE, "y");
    this.excInline = re(P.EXC_INLINE);
    this.what = re(P.WHAT, "y");
    this.ncclLine = re(P.NCCL_LINE);
    this.wrapper = re(P.WRAPPER, "y");
    this.rootCause = re(P.ROOT_CAUSE);
    this.field = re(P.FIELD, "y");
    this.loggy = re(P.LOGGY);
    this.sentence = re(P.SENTENCE, "g");
    this.wrapperTypes = new Set(C.WRAPPER_TYPES);
    this.launcherFailed = re(P.LAUNCHER_FAILED);
    this.progress = re(P.PROGRESS);
    this.command = re(P.COMMAND);
    this.option = re(P.OPTION, "g");
    this.setting = re(P.SETTING, "y");
    this.environment = re(P.ENVIRONMENT, "y");
    this.dumpStart = re(P.DUMP_START, "y");
    this.dumpItem = re(P.DUMP_ITEM, "g");
    this.ownPrefix = re(P.OWN_PREFIX, "y");
  }

  /* _ownoutput.own_lines: the indexes of the lines of a block kb printed (a heading starting with OWN_MARK,
   * then the indented or blank lines under it, per speaker: the rank prefixes in front of the line) */
  Parser.prototype.ownLines = function (raws) {
    var mark = this.C.OWN_MARK, own = new Set(), inside = new Map(), self = this;
    raws.forEach(function (raw, index) {
      var line = raw.replace(/\r+$/, ""), m = matchStart(self.ownPrefix, line), end = m ? m[0].length : 0;
      var speaker = line.slice(0, end).split(" ").join(""), body = line.slice(end);
      var heading = body.startsWith(mark) && (body.charAt(mark.length) === " " || body.charAt(mark.length) === ":");
      var continues = !body || body[0] === " " || body[0] === "\t";
      if (heading || (inside.get(speaker) && continues)) {
        inside.set(speaker, true);
        own.add(index);
      } else {
        inside.set(speaker, false);
      }
    });
    return own;
  };

  function count(pattern, text) { return (text.match(pattern) || []).length; }

  /* _is_context: a configuration dump, command line, environment listing or progress bar line */
  Parser.prototype.isContext = function (text) {
    if (this.progress.test(text) || this.command.test(text) || matchStart(this.setting, text) ||
        matchStart(this.environment, text) || matchStart(this.dumpStart, text)) return true;
    return count(this.option, text) >= this.C.MIN_OPTIONS && count(this.sentence, text.replace(this.option, " ")) < this.C.SENTENCE_WORDS;
  };

  /* _prose_line: without the items of a configuration or key list dumped into the line */
  Parser.prototype.proseLine = function (text) {
    return count(this.dumpItem, text) >= this.C.MIN_DUMP_ITEMS ? text.replace(this.dumpItem, " ") : text;
  };

  Parser.prototype.cap = function (text) {
    var C = this.C, dropped = 0;
    var size = pyLen(text);
    if (size > C.MAX_CHARS) {
      var cut = pySlice(text, size - C.MAX_CHARS).length;
      var newline = text.indexOf("\n", cut);
      cut = newline >= 0 && pyLen(text.slice(cut, newline)) < C.NEWLINE_SEARCH ? newline + 1 : cut;
      dropped = countChar(text, 10, 0, cut);
      text = text.slice(cut);
    }
    if (countChar(text, 10, 0, text.length) >= C.MAX_LINES) {
      var parts = text.split("\n");
      dropped += parts.length - C.MAX_LINES;
      text = parts.slice(-C.MAX_LINES).join("\n");
    }
    return [text, dropped];
  };

  Parser.prototype.clean = function (raw) {
    var C = this.C;
    if (raw.indexOf("\r") >= 0) {
      var segments = raw.split("\r").filter(function (s) { return pyStrip(s); });
      raw = segments.length ? segments[segments.length - 1] : "";
    }
    raw = pySlice(raw, C.RAW_LINE_CHARS).split(C.BETWEEN_WORDS).join(" ").replace(this.ansi, "").replace(this.control, "");
    var rank = null;
    for (var i = 0; i < C.MAX_PREFIXES; i++) {
      var m = matchStart(this.prefix, raw);
      if (!m || !m[0] || (m[2] !== undefined && !pyStrip(raw.slice(m[0].length)))) break;  // a bar alone stays
      if (m[1] !== undefined) rank = pyInt(m[1]);
      raw = raw.slice(m[0].length);
    }
    return [pyRstrip(pySlice(raw.replace(this.box, ""), C.MAX_LINE_CHARS)), rank];
  };

  /* clean_lines: every line of a whole output (its last MAX_OUTPUT_CHARS), cleaned as a paste's lines are */
  Parser.prototype.cleanLines = function (text) {
    var self = this, size = pyLen(text);
    if (size > this.C.MAX_OUTPUT_CHARS) text = text.slice(pySlice(text, size - this.C.MAX_OUTPUT_CHARS).length);
    var raws = text.split("\n"), own = text.indexOf(this.C.OWN_MARK) >= 0 ? this.ownLines(raws) : new Set();
    return raws.map(function (raw, i) { return own.has(i) ? "" : self.clean(raw)[0]; });
  };

  /* _split: kb's own blocks and the lines numbered in skip (a Set) are read as blank */
  Parser.prototype.split = function (text, firstLine, skip) {
    var capped = this.cap(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text), parts = capped[0].split("\n"), lines = [];
    var own = capped[0].indexOf(this.C.OWN_MARK) >= 0 ? this.ownLines(parts) : new Set();
    for (var i = 0; i < parts.length; i++) {
      var number = firstLine + capped[1] + i;
      var c = own.has(i) || (skip && skip.has(number)) ? ["", null] : this.clean(parts[i]);
      lines.push({ number: number, text: c[0], rank: c[1], role: "text" });
    }
    return lines;
  };

  Parser.prototype.exceptionAt = function (text, inTraceback) {
    var stripped = stripChars(pyStrip(text), this.C.CODE_QUOTES);
    var pats = [this.warnLine, this.excLine];
    for (var i = 0; i < 2; i++) {
      var m = matchStart(pats[i], stripped);
      if (m && (m.groups.msg || inTraceback || i === 0 || m.groups.type.indexOf(".") >= 0)) {
        return [m.groups.type, pyStrip(m.groups.msg || "")];
      }
    }
    var what = matchStart(this.what, stripped);
    if (what) return [this.C.WHAT_TYPE, pyStrip(what.groups.msg)];
    var inline = this.excInline.exec(stripped);
    if (inline) return [inline.groups.type, rstripChars(pyStrip(inline.groups.msg), this.C.QUOTES)];
    var nccl = this.ncclLine.exec(stripped);
    if (nccl) return [this.C.NCCL_TYPE, rstripChars(pyStrip(nccl.groups.msg), this.C.QUOTES)];
    return null;
  };

  Parser.prototype.isStructural = function (text) {
    return !pyStrip(text) || this.tbHeader.test(text) || this.chain.test(text) || !!matchStart(this.frame, text);
  };

  function withRole(line, role) { return { number: line.number, text: line.text, rank: line.rank, role: role }; }

  Parser.prototype.collect = function (lines) {
    var out = [], found = [], block = 0, inTb = false, i = 0, C = this.C;
    while (i < lines.length) {
      var line = lines[i], text = line.text;
      if (this.tbHeader.test(text)) { inTb = true; out.push(withRole(line, "header")); i++; continue; }
      if (this.chain.test(text)) { out.push(withRole(line, "header")); i++; continue; }
      if (matchStart(this.frameStart, text)) inTb = true;  // a paste may begin mid-traceback, without its header
      if (inTb && matchStart(this.frame, text)) {
        out.push(withRole(line, "frame"));
        i++;
        // the source line under a frame is code, not a message (pastes often lose its indent)
        if (i < lines.length && pyStrip(lines[i].text) && !this.isStructural(lines[i].text) &&
            this.exceptionAt(lines[i].text, true) === null) {
          out.push(withRole(lines[i], "frame"));
          i++;
        }
        continue;
      }
      var hit = this.exceptionAt(text, inTb);
      if (hit === null) { out.push(line); i++; continue; }
      var kind = hit[0], message = hit[1];
      out.push(withRole(line, "message"));
      var at = out.length - 1, extra = 0;
      var runsOn = inTb || !message || message.endsWith(C.RUNS_ON);
      i++;
      while (i < lines.length && extra < C.MAX_CONTINUATION && !this.isStructural(lines[i].text) &&
             (runsOn || SPACE_FIRST.test(lines[i].text)) &&
             (!message || this.exceptionAt(lines[i].text, false) === null)) {
        message = pyStrip(message + " " + pyStrip(lines[i].text));
        out.push(withRole(lines[i], "message"));
        i++;
        extra++;
      }
      found.push([kind, message, at, block]);
      if (inTb) {
        var nxt = i < lines.length ? lines[i].text : "";
        if (!this.chain.test(nxt) && !(!pyStrip(nxt) && i + 1 < lines.length && this.chain.test(lines[i + 1].text))) {
          block++;
        }
        inTb = false;
      } else {  // a warning or error printed outside a traceback is not part of the next traceback's chain
        block++;
      }
    }
    return [out, found];
  };

  Parser.prototype.rootCauseOf = function (lines) {
    for (var index = 0; index < lines.length; index++) {
      if (!this.rootCause.test(lines[index].text)) continue;
      var rank = null, extra = [];
      for (var j = index + 1; j < Math.min(index + this.C.ROOT_CAUSE_LINES, lines.length); j++) {
        var m = matchStart(this.field, lines[j].text);
        if (!m) continue;
        if (m[1] === "rank") {
          var digits = DIGITS.exec(m[2]);
          rank = digits ? pyInt(digits[0]) : null;
        } else if (m[1] === "traceback" && m[2].indexOf(this.C.NO_TRACEBACK) < 0) {
          extra.push([pyStrip(m[2]), j]);
        }
      }
      return [rank, extra];
    }
    return [null, []];
  };

  /* _real: the exceptions that are not a wrapper relaying another one */
  Parser.prototype.real = function (found) {
    var self = this;
    return found.filter(function (f) { return !self.wrapperTypes.has(lastPart(f[0])) && !matchStart(self.wrapper, f[1]); });
  };

  /* _launcher_only: a launcher's failure summary is all the paste says about the failure */
  Parser.prototype.launcherOnly = function (lines, found) {
    var self = this;
    var summary = found.some(function (f) { return self.wrapperTypes.has(lastPart(f[0])); }) ||
      lines.some(function (l) { return self.rootCause.test(l.text) || self.launcherFailed.test(l.text); });
    return summary && !this.real(found).length && !this.rootCauseOf(lines)[1].length;
  };

  Parser.prototype.weigh = function (lines, found) {
    var C = this.C, rc = this.rootCauseOf(lines), rootRank = rc[0];
    var real = this.real(found);
    if (rootRank !== null && real.some(function (f) { return lines[f[2]].rank === rootRank; })) {
      real = real.filter(function (f) { return lines[f[2]].rank === rootRank; });
    }
    var lastBlock = real.length ? real[real.length - 1][3] : -1;
    var isReal = new Set(real.map(function (f) { return f[2]; }));
    var messages = found.map(function (f) {
      var weight = !isReal.has(f[2]) ? C.WRAPPER_WEIGHT : f[3] === lastBlock ? C.FAILURE_WEIGHT : C.OTHER_WEIGHT;
      return { type: f[0], text: f[1], line: f[2], weight: weight };
    });
    rc[1].forEach(function (e) { messages.push({ type: null, text: e[0], line: e[1], weight: C.FAILURE_WEIGHT }); });
    return messages;
  };

  Parser.prototype.kind = function (lines, messages) {
    var self = this;
    if (lines.some(function (l) { return l.role === "header" || l.role === "frame"; }) ||
        messages.some(function (m) {
          return self.C.WRAPPER_TYPES.some(function (t) { return (m.type || "").endsWith(t); });
        })) return "traceback";
    var loggy = 0, wordy = 0;
    lines.forEach(function (l) {
      var isLoggy = self.loggy.test(l.text);
      if (l.role === "message" || isLoggy) loggy++;
      if (l.role === "text" && (l.text.match(self.sentence) || []).length >= self.C.SENTENCE_WORDS && !isLoggy) wordy++;
    });
    return loggy && loggy >= wordy ? "log" : "prose";
  };

  /* firstLine numbers the text's first line (the tail of a longer output), as parse(first_line=) */
  Parser.prototype.parse = function (text, firstLine, skip) {
    var self = this, collected = this.collect(this.split(String(text), firstLine === undefined ? 1 : firstLine, skip));
    var lines = collected[0].map(function (l) {
      return l.role === "text" && self.isContext(l.text) ? withRole(l, "context") : l;
    });
    var messages = this.weigh(lines, collected[1]);
    var prose = lines.filter(function (l) { return l.role === "text" || l.role === "message"; })
      .map(function (l) { return self.proseLine(l.text); }).join("\n");
    // the paste stops inside a traceback, before its exception: the failure itself is not in it
    var last = null;
    for (var i = lines.length - 1; i >= 0 && last === null; i--) if (pyStrip(lines[i].text)) last = lines[i].role;
    return { kind: this.kind(lines, messages), lines: lines, messages: messages, prose: prose,
             launcherOnly: this.launcherOnly(lines, collected[1]), cut: last === "header" || last === "frame" };
  };

  /* ---- rapidfuzz partial_ratio_alignment, on a bit-parallel LCS ----
   * A port of rapidfuzz's C++ partial_ratio_impl (the one `fuzz.partial_ratio_alignment` runs in
   * rapidfuzz 3.11 and later, rapidfuzz-cpp 3.2+; pyproject.toml keeps rapidfuzz below 4): the same
   * windows in the same order with the same cut-offs, so ties resolve to the same window. Strings
   * are compared as arrays of code points, as Python indexes a str. */

  function codePoints(text) {
    var out = [];
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      if (c >= 0xD800 && c <= 0xDBFF && i + 1 < text.length) {
        var d = text.charCodeAt(i + 1);
        if (d >= 0xDC00 && d <= 0xDFFF) { out.push(((c - 0xD800) << 10) + (d - 0xDC00) + 0x10000); i++; continue; }
      }
      out.push(c);
    }
    return out;
  }
  function fromCodePoints(codes, from, to) {
    var out = "";
    for (var i = from; i < to; i++) out += String.fromCodePoint(codes[i]);
    return out;
  }

  function Needle(s1) {
    this.s = s1;
    this.n = s1.length;
    this.words = Math.max(1, Math.ceil(s1.length / 32));
    this.pm = new Map();
    for (var i = 0; i < s1.length; i++) {
      var v = this.pm.get(s1[i]);
      if (!v) { v = new Uint32Array(this.words); this.pm.set(s1[i], v); }
      v[i >>> 5] |= 1 << (i & 31);
    }
    this.v = new Uint32Array(this.words);
  }
  /* LCS length of the needle and s2[from:to] (Hyyro's bit-vector algorithm). */
  Needle.prototype.lcs = function (s2, from, to) {
    var w = this.words, V = this.v, k;
    for (k = 0; k < w; k++) V[k] = 0xFFFFFFFF;
    for (var j = from; j < to; j++) {
      var M = this.pm.get(s2[j]);
      if (!M) continue;
      var carry = 0;
      for (k = 0; k < w; k++) {
        var u = (V[k] & M[k]) >>> 0;
        var sum = V[k] + u + carry;
        carry = sum > 0xFFFFFFFF ? 1 : 0;
        V[k] = ((sum >>> 0) | (V[k] & ~u)) >>> 0;
      }
    }
    var len = this.n, zeros = 0;
    for (k = 0; k < w; k++) {
      var bits = Math.min(32, len - k * 32);
      var x = ~V[k] >>> 0;
      if (bits < 32) x &= (1 << bits) - 1;
      x = x - ((x >>> 1) & 0x55555555);
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      zeros += (((x + (x >>> 4)) & 0x0F0F0F0F) * 0x01010101) >>> 24;
    }
    return zeros;
  };
  /* Indel distance of the needle and s2[from:to]. */
  Needle.prototype.dist = function (s2, from, to) {
    return this.n + (to - from) - 2 * this.lcs(s2, from, to);
  };
  function normSimToNormDist(sim) { return Math.min(1.0, 1.0 - sim + 0.00001); }
  /* CachedRatio.similarity: the indel normalised similarity x 100, 0 below the cut-off */
  Needle.prototype.similarity = function (s2, from, to, cutoff) {
    var maximum = this.n + (to - from), sim = cutoff / 100;
    var normDist = maximum ? this.dist(s2, from, to) / maximum : 0;
    if (normDist > normSimToNormDist(sim)) normDist = 1.0;
    var normSim = 1.0 - normDist;
    return (normSim >= sim ? normSim : 0) * 100;
  };

  /* partial_ratio_impl: s1 no longer than s2, both non-empty */
  function partialImpl(s1, s2, cutoff) {
    var needle = new Needle(s1), len1 = s1.length, len2 = s2.length, i;
    var res = { score: 0, srcStart: 0, srcEnd: len1, destStart: 0, destEnd: len1 };
    var chars = needle.pm;
    if (len2 > len1) {
      var maximum = len1 * 2, cutoffDist = Math.ceil(maximum * normSimToNormDist(cutoff / 100));
      var bestDist = Infinity, scores = new Array(len2 - len1).fill(-1);
      var windows = [[0, len2 - len1 - 1]];
      while (windows.length) {
        var next = [];
        for (var w = 0; w < windows.length; w++) {
          var first = windows[w][0], second = windows[w][1], ends = [first, second];
          for (var e = 0; e < 2; e++) {
            var at = ends[e];
            if (scores[at] !== -1) continue;
            scores[at] = needle.dist(s2, at, at + len1);
            if (scores[at] < cutoffDist) {
              cutoffDist = bestDist = scores[at];
              res.destStart = at;
              res.destEnd = at + len1;
              if (bestDist === 0) { res.score = 100; return res; }
            }
          }
          var cellDiff = second - first;
          if (cellDiff === 1) continue;
          // the least distance the range can hold: half the cells not needed for the known edits can improve it
          var knownEdits = Math.abs(scores[first] - scores[second]);
          var minScore = Math.min(scores[first], scores[second]) - Math.floor((cellDiff - Math.floor(knownEdits / 2)) / 2) * 2;
          if (minScore < cutoffDist) {
            var center = Math.floor(cellDiff / 2);
            next.push([first, first + center], [first + center, second]);
          }
        }
        windows = next;
      }
      var score = (1.0 - bestDist / maximum) * 100;
      if (score >= cutoff) cutoff = res.score = score;
    }
    var r;
    for (i = 1; i < len1; i++) {
      if (!chars.has(s2[i - 1])) continue;
      r = needle.similarity(s2, 0, i, cutoff);
      if (r > res.score) {
        cutoff = res.score = r;
        res.destStart = 0;
        res.destEnd = i;
        if (r === 100) return res;
      }
    }
    for (i = len2 - len1; i < len2; i++) {
      if (!chars.has(s2[i])) continue;
      r = needle.similarity(s2, i, len2, cutoff);
      if (r > res.score) {
        cutoff = res.score = r;
        res.destStart = i;
        res.destEnd = len2;
        if (r === 100) return res;
      }
    }
    return res;
  }

  function swapped(res) {
    return { score: res.score, srcStart: res.destStart, srcEnd: res.destEnd, destStart: res.srcStart, destEnd: res.srcEnd };
  }

  /* fuzz.partial_ratio_alignment(a, b, score_cutoff=cutoff): {score, srcStart, srcEnd, destStart, destEnd}
   * (indexes into a and b as code-point arrays) or null below the cut-off */
  function alignment(a, b, cutoff) {
    cutoff = cutoff || 0;
    if (typeof a === "string") a = codePoints(a);
    if (typeof b === "string") b = codePoints(b);
    if (!a.length && !b.length) return { score: 100, srcStart: 0, srcEnd: 0, destStart: 0, destEnd: 0 };
    var res;
    if (a.length > b.length) {
      res = alignment(b, a, cutoff);
      return res && swapped(res);
    }
    if (cutoff > 100) return null;
    if (!a.length) res = { score: 0, srcStart: 0, srcEnd: 0, destStart: 0, destEnd: 0 };
    else {
      res = partialImpl(a, b, cutoff);
      if (res.score !== 100 && a.length === b.length) {
        var other = partialImpl(b, a, Math.max(cutoff, res.score));
        if (other.score > res.score) res = swapped(other);
      }
    }
    return res.score >= cutoff ? res : null;
  }

  function partialRatio(a, b, cutoff) {
    var res = alignment(a, b, cutoff);
    return res ? res.score : 0;
  }

  /* ---- tells (_tells.py): conditions on the rest of the output, run line by line like the signatures ---- */

  var NEVER = "(?!)";  // the contract's regex for a pattern RE2 cannot run, or the browser must not
  /* a tell's condition with its regex compiled; regex null: the pattern cannot run, so the condition never holds */
  function tellCondition(condition) {
    var kind = ["line", "no_line", "rises", "compare"].filter(function (k) { return has(condition, k); })[0];
    var spec = kind === "compare" ? condition.compare.match : condition[kind], regex = null;
    if (spec[0] !== NEVER) {
      try { regex = re(spec, kind === "rises" ? "g" : ""); } catch (error) { regex = null; }
    }
    return { kind: kind, regex: regex, compare: kind === "compare" ? condition.compare : null };
  }

  /* size_value: a number with an optional size unit, in bytes (a bare number as it is); null when neither */
  Engine.prototype.sizeValue = function (text) {
    if (text === undefined || text === null) return null;
    var m = matchStart(this.sizeValueRe, text), units = this.C.SIZE_UNITS;
    if (!m) return null;
    var unit = m[2].toLowerCase();
    return has(units, unit) ? Number(m[1]) * units[unit] : null;
  };
  /* a named group's text; undefined when the pattern lacks it or it took no part */
  function group(m, name) { return m.groups && has(m.groups, name) ? m.groups[name] : undefined; }

  function firstMatch(regex, lines) {
    for (var i = 0; i < lines.length; i++) {
      var m = regex.exec(lines[i]);
      if (m) return m;
    }
    return null;
  }

  Engine.prototype.compare = function (c, lines) {
    var m = firstMatch(c.regex, lines);
    if (!m) return false;
    var left = this.sizeValue(group(m, c.compare.left)), right = c.compare.right;
    right = typeof right === "number" ? right : this.sizeValue(group(m, right));
    if (left === null || right === null) return false;
    right *= c.compare.times;
    var op = c.compare.op;
    if (op === ">") return left > right;
    if (op === ">=") return left >= right;
    return op === "<" ? left < right : left <= right;
  };

  Engine.prototype.rises = function (regex, lines) {
    var C = this.C, values = [], m;
    for (var i = 0; i < lines.length && values.length < C.MAX_SERIES; i++) {
      regex.lastIndex = 0;
      while (values.length < C.MAX_SERIES && (m = regex.exec(lines[i])) !== null) {
        if (m[0].length === 0) regex.lastIndex++;
        var value = this.sizeValue(group(m, "value"));
        if (value !== null) values.push(value);
      }
    }
    if (values.length < C.RISE_MIN_POINTS || values[values.length - 1] < C.RISE_RATIO * values[0]) return false;
    var ups = 0, downs = 0;
    for (var k = 1; k < values.length; k++) {
      if (values[k] > values[k - 1]) ups++;
      else if (values[k] < values[k - 1]) downs++;
    }
    return ups >= C.RISE_MAJORITY * downs && ups > 0;
  };

  Engine.prototype.holds = function (c, lines) {
    if (c.regex === null) return false;
    if (c.kind === "line" || c.kind === "no_line") {
      var found = lines.some(function (line) { return c.regex.test(line); });
      return c.kind === "line" ? found : !found;
    }
    return c.kind === "compare" ? this.compare(c, lines) : this.rises(c.regex, lines);
  };

  /* whether a tell, as the contract ships it, fires on these lines (for the parity tests) */
  Engine.prototype.fires = function (tell, lines) {
    return firstFired([{ says: tell.says, when: tell.when.map(tellCondition) }], lines, this) !== null;
  };

  /* first_fired: the first of an entry's tells whose every condition holds, or null */
  function firstFired(tells, lines, engine) {
    for (var i = 0; i < tells.length; i++) {
      if (tells[i].when.every(function (c) { return engine.holds(c, lines); })) return tells[i];
    }
    return null;
  }

  /* ---- score (_score.py) ---- */

  function Engine(data) {
    checkContract(data);
    var C = data.constants, P = data.patterns;
    this.C = C;
    this.norm = new Normalizer(C, P);
    this.parser = new Parser(C, P);
    this.entries = data.entries;
    this.sigs = data.sigs.map(function (s) {
      return { entry: s.entry, source: s.source, regex: re(s.regex, "g"), literal: s.literal, type: s.type,
               texts: s.texts.map(codePoints), nterms: s.terms.length, terms: s.terms, spec: s.spec,
               required: s.required, numbers: s.numbers, ambiguous: s.ambiguous, namesCause: s.names_cause,
               named: new Set(s.names) };
    });
    this.aliases = data.aliases;  // entry -> [[words, idf total], ...]
    // aliases written as error fragments, with their words
    var norm = this.norm;
    this.phrases = data.phrases.map(function (p) {
      return { entry: p.entry, text: p.text, alias: p.alias, spec: p.spec, ambiguous: p.ambiguous,
               words: norm.terms(p.alias) };
    });
    this.background = data.background;  // word -> weight in the prose model (1 when absent)
    this.adviceTexts = data.advice;
    this.libraryFrame = re(P.LIBRARY_FRAME);
    this.training = re(P.TRAINING);
    this.excludes = data.excludes.map(function (x) { return [x.entry, re(x.regex)]; });
    this.sizeValueRe = re(P.SIZE_VALUE, "y");
    this.ranksBlock = re(P.RANKS_BLOCK);
    this.ranksBlockRank = re(P.RANKS_BLOCK_RANK);
    this.ranksRule = re(P.RANKS_RULE);
    this.tells = new Map();  // entry -> its tells in record order, each condition's regex compiled
    var tells = this.tells;
    data.tells.forEach(function (t) {
      if (!tells.has(t.entry)) tells.set(t.entry, []);
      tells.get(t.entry).push({ says: t.says, when: t.when.map(tellCondition) });
    });
    this.gate = data.gate;
    this.ungated = data.ungated;
    this.postings = data.postings;
    this.idf = data.idf;
    this.sigTerms = data.sig_terms;
  }

  function owners(query) {
    var starts = new Map(), out = [], current = null;
    query.messages.forEach(function (m) { starts.set(m.line, m); });
    query.lines.forEach(function (line, i) {
      if (starts.has(i)) current = starts.get(i);
      else if (line.role !== "message") current = null;
      out.push(current);
    });
    return out;
  }

  function lastPart(name) { var p = name.split("."); return p[p.length - 1]; }
  Engine.prototype.typeBonus = function (sig, message) {
    if (!sig.type || !message || !message.type) return 0;
    return lastPart(sig.type) === lastPart(message.type) ? this.C.TYPE_BONUS : 0;
  };
  function addHit(hits, entry, ev) {
    if (!hits.has(entry)) hits.set(entry, []);
    hits.get(entry).push(ev);
  }
  function has(object, key) { return Object.prototype.hasOwnProperty.call(object, key); }

  Engine.prototype.exact = function (query) {
    var C = this.C, lines = query.lines, own = owners(query), self = this;
    var weights = lines.map(function (line, i) {
      return own[i] ? own[i].weight : has(C.ROLE_WEIGHT, line.role) ? C.ROLE_WEIGHT[line.role] : C.ROLE_WEIGHT.text;
    });
    var raw = lines.map(function (l) { return l.text; }).join("\n");
    var masked = null, hits = new Map();
    var present = new Set(this.norm.terms(raw)), numbers = new Set(this.ungated), gate = this.gate;
    present.forEach(function (term) {
      if (has(gate, term)) gate[term].forEach(function (n) { numbers.add(n); });
    });
    Array.from(numbers).sort(function (a, b) { return a - b; }).forEach(function (number) {
      var sig = self.sigs[number], found = [], m;
      if (!sig.required.every(function (w) { return present.has(w); })) return;
      // one line at a time, as RE2 matches them in Python (never across a newline): a line is at most
      // MAX_LINE_CHARS long, which bounds what a backtracking JavaScript regex is ever given
      for (var at = 0; at < lines.length && found.length < C.MAX_HITS_PER_SIG; at++) {
        var text = lines[at].text;
        sig.regex.lastIndex = 0;
        while (found.length < C.MAX_HITS_PER_SIG && (m = sig.regex.exec(text)) !== null) {
          if (m[0].length === 0) sig.regex.lastIndex++;
          found.push([at, [pyIndex(text, m.index), pyIndex(text, m.index + m[0].length)]]);
        }
      }
      if (!found.length && sig.literal) {
        if (masked === null) masked = lines.map(function (l) { return self.norm.normalize(l.text); });
        for (var i = 0; i < masked.length && found.length < C.MAX_HITS_PER_SIG; i++) {
          if (masked[i].indexOf(sig.literal) >= 0) found.push([i, null]);
        }
      }
      found.forEach(function (f) {
        var at = f[0], line = lines[at];
        addHit(hits, sig.entry, { line: line.number, text: f[1] === null ? pyStrip(line.text) : line.text,
                                  signature: sig.source, span: f[1], at: at, via: "signature",
                                  ambiguous: sig.ambiguous, words: sig.terms, namesCause: sig.namesCause,
                                  strength: C.EXACT_STRENGTH * weights[at] * sig.spec + self.typeBonus(sig, own[at]) });
      });
    });
    return hits;
  };

  /* [line index, text, weight, message]: messages, then other text lines; a repeated text once,
   * where it weighs most (then latest); only the last few hundred of each kind */
  Engine.prototype.segments = function (query) {
    var C = this.C, own = owners(query), plain = [], found = new Map();
    query.lines.forEach(function (line, i) {
      if (line.role === "text" && own[i] === null && pyLen(line.text) >= C.MIN_LINE_CHARS) plain.push(i);
    });
    var candidates = query.messages.slice(-C.MAX_MESSAGE_SEGMENTS).map(function (m) { return [m.line, m.text, m.weight, m]; });
    plain.slice(-C.MAX_TEXT_SEGMENTS).forEach(function (i) {
      candidates.push([i, query.lines[i].text, C.ROLE_WEIGHT.text, null]);
    });
    candidates.forEach(function (seg) {
      var seen = found.get(seg[1]);
      if (seen === undefined || seg[2] > seen[2] || (seg[2] === seen[2] && seg[0] >= seen[0])) found.set(seg[1], seg);
    });
    return Array.from(found.values());
  };

  /* _widen: codes[start:end] grown to whole words */
  function widen(codes, start, end) {
    while (start > 0 && isAlnum(codes[start - 1])) start--;
    while (end < codes.length && isAlnum(codes[end])) end++;
    return fromCodePoints(codes, start, end);
  }
  function counts(words) {
    var out = new Map();
    words.forEach(function (w) { out.set(w, (out.get(w) || 0) + 1); });
    return out;
  }
  function exceeds(a, b) {  // Counter(a) - Counter(b) is not empty
    var more = false;
    a.forEach(function (n, w) { if (n > (b.get(w) || 0)) more = true; });
    return more;
  }
  /* _substituted: the aligned windows trade content words (a sibling message, not a retyped copy) */
  Engine.prototype.substituted = function (candidate, text, aligned, named) {
    var mine = counts(this.norm.contentWords(widen(candidate, aligned.srcStart, aligned.srcEnd), named));
    var theirs = counts(this.norm.contentWords(widen(text, aligned.destStart, aligned.destEnd)));
    return exceeds(mine, theirs) && exceeds(theirs, mine);
  };

  Engine.prototype.fuzzy = function (query, segments) {
    var C = this.C, self = this, hits = new Map(), floor = C.FUZZY_FLOOR;
    segments.forEach(function (seg) {
      var raw = pySlice(seg[1], C.MAX_LINE_CHARS), text = codePoints(self.norm.normalize(raw));
      if (text.length < C.MIN_FUZZY_CHARS) return;
      var numbers = new Set(raw.match(self.norm.number) || []), overlap = new Map();
      var words = new Set(self.norm.terms(raw));
      words.forEach(function (word) {
        (has(self.sigTerms, word) ? self.sigTerms[word] : []).forEach(function (n) {
          overlap.set(n, (overlap.get(n) || 0) + 1);
        });
      });
      // by signature number, as _score._fuzzy walks them: evidence of equal strength keeps that order
      Array.from(overlap.keys()).sort(function (a, b) { return a - b; }).forEach(function (number) {
        var shared = overlap.get(number), sig = self.sigs[number];
        if (shared < Math.max(C.MIN_SHARED_TERMS, C.SHARED_TERMS_SHARE * sig.nterms)) return;
        // "exitcode: -11" is not a retyped "exitcode: -9"
        if (!sig.numbers.every(function (n) { return numbers.has(n); })) return;
        var best = 0;
        sig.texts.forEach(function (candidate) {
          var aligned = alignment(candidate, text, floor);
          if (aligned === null || !aligned.score) return;
          var coverage = Math.min(text.length, candidate.length) / Math.max(candidate.length, 1);
          var strength = (aligned.score - floor) / (100 - floor) * Math.sqrt(coverage);
          if (self.substituted(candidate, text, aligned, sig.named)) strength *= C.SUBSTITUTION_PENALTY;
          best = Math.max(best, strength);
        });
        if (best > 0) {
          var line = query.lines[seg[0]];
          addHit(hits, sig.entry, { line: line.number, text: pyStrip(line.text), signature: sig.source, span: null,
                                    at: seg[0], via: "signature", ambiguous: sig.ambiguous, words: sig.terms,
                                    // see _score._fuzzy: a sibling message aligns too
                                    namesCause: sig.namesCause && sig.required.every(function (w) { return words.has(w); }),
                                    partial: sig.namesCause && !sig.required.every(function (w) { return words.has(w); }),
                                    strength: C.FUZZY_STRENGTH * best * seg[2] * sig.spec + self.typeBonus(sig, seg[3]) });
        }
      });
    });
    return hits;
  };

  /* aliases written as error fragments, found verbatim (masked) in an exception message */
  Engine.prototype.phraseHits = function (query, segments) {
    var C = this.C, self = this, hits = new Map();
    segments.forEach(function (seg) {
      var message = seg[3];
      if (message === null || message.weight < C.OTHER_WEIGHT || !message.type) return;
      var text = " " + self.norm.normalize(pySlice(message.text, C.MAX_LINE_CHARS)) + " ";
      self.phrases.forEach(function (p) {
        var phrase = p.text, pos = text.indexOf(phrase);
        if (pos < 0 || isAlnum(codeBefore(text, pos)) || isAlnum(text.codePointAt(pos + phrase.length))) return;
        var line = query.lines[message.line];
        addHit(hits, p.entry, { line: line.number, text: pyStrip(line.text), signature: p.alias, span: null,
                                at: message.line, via: "alias", ambiguous: p.ambiguous, words: p.words,
                                strength: C.ALIAS_STRENGTH * message.weight * p.spec });
      });
    });
    return hits;
  };

  /* heapq.nlargest(n, keys, key): a stable sort, largest first */
  function nlargest(n, keys, value) {
    return keys.slice().sort(function (a, b) { return value(b) - value(a); }).slice(0, n);
  }

  /* weight(term): the word's background weight (1 when absent) */
  Engine.prototype.bm25 = function (queryTerms, weight) {
    var counted = new Map(), scores = new Map(), self = this, idf = this.idf, C = this.C;
    queryTerms.forEach(function (t) {
      if (has(idf, t)) counted.set(t, (counted.get(t) || 0) + 1);
    });
    nlargest(C.MAX_QUERY_TERMS, Array.from(counted.keys()), function (t) { return idf[t]; }).forEach(function (term) {
      var boost = idf[term] * weight(term) * Math.pow(Math.min(counted.get(term), C.MAX_TERM_REPEATS), 0.5);
      self.postings[term].forEach(function (p) { scores.set(p[0], (scores.get(p[0]) || 0) + boost * p[1]); });
    });
    return scores;
  };

  /* a word many failure reports share covers only its background weight of the alias */
  Engine.prototype.aliasCover = function (queryTerms, candidates, weight) {
    var best = new Map(), idf = this.idf, aliases = this.aliases, C = this.C;
    candidates.forEach(function (entry) {
      (aliases[entry] || []).forEach(function (a) {
        var words = a[0], total = a[1];
        if (words.length < C.MIN_ALIAS_WORDS || total <= 0) return;
        var cover = 0;
        words.forEach(function (w) {
          if (queryTerms.has(w)) cover += (has(idf, w) ? idf[w] : 0) * weight(w);
        });
        cover = (cover / total) * Math.min(1.0, words.length / C.FULL_ALIAS_WORDS);
        best.set(entry, Math.max(best.get(entry) || 0, cover));
      });
    });
    return best;
  };

  /* many distinct words, few of them anywhere in the catalogue: noise, not a description (_score._noise) */
  Engine.prototype.noise = function (queryTerms) {
    var C = this.C, idf = this.idf, known = 0;
    var distinct = new Set(queryTerms.filter(function (t) { return t.length >= C.NOISE_MIN_CHARS; }));
    if (distinct.size < C.NOISE_MIN_TERMS) return false;
    distinct.forEach(function (t) { if (has(idf, t)) known++; });
    return known < C.NOISE_KNOWN_SHARE * distinct.size;
  };

  /* skip: the words of a message many root causes print, which cannot tell those causes apart;
   * words many failure reports share weigh less, except in the failure's own exception message */
  Engine.prototype.prose = function (query, skip) {
    var C = this.C, self = this, bg = this.background, symptom = new Set();
    var queryTerms = this.norm.terms(query.prose).filter(function (t) { return !skip.has(t); });
    var failures = new Set();
    query.messages.slice(-C.MAX_MESSAGE_SEGMENTS).forEach(function (m) {
      if (m.weight >= C.FAILURE_WEIGHT && m.type) failures.add(m.text);
    });
    failures.forEach(function (text) { self.norm.terms(text).forEach(function (t) { symptom.add(t); }); });
    function weight(term) { return !symptom.has(term) && has(bg, term) ? bg[term] : 1.0; }
    // which entries the words point to: every word counts
    var raw = this.bm25(queryTerms, function () { return 1.0; }), out = new Map();
    if (!raw.size) return out;
    var top = 0, weighted = 0;
    raw.forEach(function (value) { top = Math.max(top, value); });
    var candidates = nlargest(C.PROSE_CANDIDATES, Array.from(raw.keys()), function (d) { return raw.get(d); });
    var covered = this.aliasCover(new Set(queryTerms), candidates, weight);
    // how telling the words are is measured without the words many failure reports share
    this.bm25(queryTerms, weight).forEach(function (value) { weighted = Math.max(weighted, value); });
    var strength = 1 - Math.exp(-weighted / C.PROSE_SATURATION);
    candidates.forEach(function (doc) {
      var relative = raw.get(doc) / top;
      out.set(doc, 100.0 * (C.BM25_SHARE * strength * Math.pow(relative, 2) +
                            C.COVER_SHARE * (covered.get(doc) || 0) * relative));
    });
    return out;
  };

  /* Python's round(x, 1): the nearest tenth of the exact binary value, ties to even */
  function round1(x) {
    var tenths = x * 10;
    if (Number.isInteger(x * 4) && !Number.isInteger(x * 2) && Number.isInteger(tenths - 0.5)) {
      var low = tenths - 0.5;  // an exact tie (x = k/4): to even
      return (low % 2 === 0 ? low : low + 1) / 10;
    }
    return parseFloat(x.toFixed(1));
  }

  /* _score.score_entries: entries with signature evidence or among the best prose matches, best first. The
   * rules below mirror _score.py's function for function, under the same names (camelCase). */
  Engine.prototype.scoreEntries = function (query) {
    var self = this, found = this.hits(query), exact = found[0], fuzzy = found[1], own = owners(query);
    var prose = this.prose(query, this.ambiguousWords(query, own, exact, fuzzy));
    var paste = this.readPaste(query, own, exact, fuzzy);
    var ids = new Set(); [exact, fuzzy, prose].forEach(function (m) { m.forEach(function (_v, k) { ids.add(k); }); });
    var scored = [];
    ids.forEach(function (entry) {
      var evidence = (exact.get(entry) || []).concat(fuzzy.get(entry) || []);
      scored.push(self.scoreEntry(entry, evidence, prose.get(entry) || 0, paste));
    });
    return this.ranked(scored);
  };

  /* _hits: exact hits, then fuzzy alignments and verbatim aliases, per entry; a line one signature matched
   * exactly is explained: near-misses of others there are other errors */
  Engine.prototype.hits = function (query) {
    var exact = this.exact(query), segments = this.segments(query), explained = new Set();
    exact.forEach(function (evs) { evs.forEach(function (ev) { explained.add(ev.at); }); });
    var fuzzy = this.fuzzy(query, segments.filter(function (s) { return !explained.has(s[0]); }));
    this.phraseHits(query, segments).forEach(function (found, entry) {
      found.forEach(function (ev) { addHit(fuzzy, entry, ev); });
    });
    return [exact, fuzzy];
  };

  function eachHit(exact, fuzzy, visit) {
    [exact, fuzzy].forEach(function (found) { found.forEach(function (evs) { evs.forEach(visit); }); });
  }

  /* _ambiguous_words: the words of a message many root causes print (and of its lines) */
  Engine.prototype.ambiguousWords = function (query, own, exact, fuzzy) {
    var self = this, words = new Set();
    eachHit(exact, fuzzy, function (ev) {
      if (!ev.ambiguous) return;
      ev.words.forEach(function (w) { words.add(w); });
      self.norm.terms(own[ev.at] ? own[ev.at].text : query.lines[ev.at].text).forEach(function (w) { words.add(w); });
    });
    return words;
  };

  /* _ends_in_no_exception: no exception of the paste's last traceback chain */
  Engine.prototype.endsInNoException = function (query) {
    var C = this.C;
    return !query.messages.some(function (m) { return m.weight >= C.FAILURE_WEIGHT && m.type; });
  };

  /* _hits_on_failure: strong hits on the exception the paste ends in */
  Engine.prototype.hitsOnFailure = function (own, exact, fuzzy) {
    var C = this.C, out = [];
    eachHit(exact, fuzzy, function (ev) {
      if (ev.strength >= C.KNOWN_FAILURE && own[ev.at] && own[ev.at].weight >= C.FAILURE_WEIGHT) out.push(ev);
    });
    return out;
  };

  /* _failure_known: a signature names the failure's cause (a launcher's summary says a worker failed, not why) */
  Engine.prototype.failureKnown = function (query, noFailure, onFailure) {
    return (noFailure || onFailure.some(function (ev) { return !ev.ambiguous; })) && !query.launcherOnly;
  };

  /* _ambiguously_known: known only as a message many causes print */
  Engine.prototype.ambiguouslyKnown = function (query, onFailure, failureKnown) {
    return onFailure.length > 0 && !failureKnown && !query.launcherOnly;
  };

  /* _excluded: entries whose excludes the paste holds, run line by line as RE2 runs them in Python */
  Engine.prototype.excluded = function (query) {
    var out = new Set();
    this.excludes.forEach(function (x) {
      if (query.lines.some(function (l) { return x[1].test(l.text); })) out.add(x[0]);
    });
    return out;
  };

  /* _read_paste: what the whole paste says, which every entry's rules read */
  Engine.prototype.readPaste = function (query, own, exact, fuzzy) {
    var noFailure = this.endsInNoException(query), onFailure = this.hitsOnFailure(own, exact, fuzzy);
    var known = this.failureKnown(query, noFailure, onFailure);
    return { owners: own, cut: query.cut, noFailure: noFailure, failureKnown: known,
             ambiguouslyKnown: this.ambiguouslyKnown(query, onFailure, known),
             noise: this.noise(this.norm.terms(query.prose)), excluded: this.excluded(query) };
  };

  /* _worth: a message many root causes print is worth little alone */
  Engine.prototype.worth = function (e) {
    return e.ambiguous ? e.strength * this.C.AMBIGUOUS_SHARE : e.strength;
  };

  /* _signature_score: the best hit, plus a little per further distinct signature (an alias adds no second witness) */
  Engine.prototype.signatureScore = function (evidence) {
    var self = this, best = 0, distinct = new Set();
    evidence.forEach(function (e) {
      best = Math.max(best, self.worth(e));
      if (e.via === "signature") distinct.add(e.signature);
    });
    return Math.min(100, best + this.C.EXTRA_SIGNATURE * Math.max(distinct.size - 1, 0));
  };

  /* _cause_score: the best match of a message that names this entry's cause, when the entry explains the failure */
  Engine.prototype.causeScore = function (evidence, onIt, paste) {
    var self = this, cause = 0;
    if (!paste.noFailure && !onIt.length) return 0;
    evidence.forEach(function (e) { if (e.namesCause) cause = Math.max(cause, self.worth(e)); });
    return cause;
  };

  /* _on_the_failure: evidence on the exception the paste ends in; when the paste stops before its exception,
   * any line but a warning */
  Engine.prototype.onTheFailure = function (evidence, paste) {
    var C = this.C, own = paste.owners;
    return evidence.filter(function (e) {
      var m = own[e.at];
      return e.strength >= C.SOME_EVIDENCE &&
        (paste.cut ? !(m && (m.type || "").endsWith(C.WARNING_SUFFIX)) : Boolean(m && m.weight >= C.FAILURE_WEIGHT));
    });
  };

  /* _witnesses: the signature hits that say which symptom line the entry explains */
  Engine.prototype.witnesses = function (evidence, onIt, paste) {
    return (paste.noFailure ? evidence : onIt).filter(function (e) { return e.via === "signature"; });
  };

  /* _symptom_messages: the messages (first line of each) the strong witnesses belong to */
  Engine.prototype.symptomMessages = function (witnesses, paste) {
    var C = this.C, own = paste.owners, out = [];
    witnesses.forEach(function (e) {
      if (e.strength < C.SOME_EVIDENCE) return;
      var at = own[e.at] ? own[e.at].line : e.at;
      if (out.indexOf(at) < 0) out.push(at);
    });
    return out;
  };

  /* _words_capped: words alone must not look like a match */
  Engine.prototype.wordsCapped = function (evidence, paste) {
    var known = paste.failureKnown || (paste.ambiguouslyKnown && evidence.length > 0);
    return paste.noise || !known;
  };

  Engine.prototype.proseScore = function (prose, capped) {
    return capped ? Math.min(prose, this.C.UNKNOWN_ERROR_CAP) : prose;
  };

  /* _combined: the stronger kind of evidence, plus a share of the weaker */
  Engine.prototype.combined = function (signature, prose, capped) {
    var C = this.C, total = Math.min(100, Math.max(signature, prose) + C.OTHER_KIND_SHARE * Math.min(signature, prose));
    if (capped && signature < C.SOME_EVIDENCE) total = Math.min(total, C.UNKNOWN_ERROR_CAP);
    return total;
  };

  /* _score_entry */
  Engine.prototype.scoreEntry = function (entry, evidence, prose, paste) {
    evidence = evidence.slice().sort(function (a, b) { return b.strength - a.strength; });
    var capped = this.wordsCapped(evidence, paste), text = this.proseScore(prose, capped);
    var total = this.combined(this.signatureScore(evidence), text, capped);
    if (paste.excluded.has(entry)) {  // listed, never an answer
      return { entry: entry, score: round1(Math.min(total, this.C.EXCLUDED_CAP)), prose: text,
               evidence: this.dedupe(evidence), cause: 0, symptom: null, symptomAt: [], partial: false };
    }
    var onIt = this.onTheFailure(evidence, paste), witnesses = this.witnesses(evidence, onIt, paste);
    return { entry: entry, score: round1(total), prose: text, evidence: this.dedupe(evidence),
             cause: this.causeScore(evidence, onIt, paste), symptom: witnesses.length ? pyStrip(witnesses[0].text) : null,
             symptomAt: this.symptomMessages(witnesses, paste),
             partial: witnesses.length ? Boolean(witnesses[0].partial) : false };
  };

  /* _ranked: best first; a tie goes to more prose, then to the record id */
  Engine.prototype.ranked = function (scored) {
    var self = this;
    return scored.slice().sort(function (a, b) {
      if (a.score !== b.score) return b.score - a.score;
      if (a.prose !== b.prose) return b.prose - a.prose;
      var x = self.entries[a.entry].id, y = self.entries[b.entry].id;
      return x < y ? -1 : x > y ? 1 : 0;
    });
  };

  /* the strongest few, one per (line, signature) */
  Engine.prototype.dedupe = function (evidence) {
    var seen = new Set(), out = [];
    evidence.forEach(function (e) {
      var key = e.line + "\u0000" + e.signature;
      if (!seen.has(key)) { seen.add(key); out.push(e); }
    });
    return out.slice(0, this.C.MAX_EVIDENCE);
  };

  /* _hint.foreign_package: the package a traceback comes from when nothing in it is about training, else null */
  Engine.prototype.foreignPackage = function (query) {
    var self = this, found = null;
    if (query.kind !== "traceback" || query.lines.some(function (l) { return self.training.test(l.text); })) return null;
    query.lines.forEach(function (l) {
      var m = l.role === "frame" ? self.libraryFrame.exec(l.text) : null;
      if (m) found = m[1];
    });
    return found;
  };

  /* _hint.advice: what would help when search abstains, for what the paste holds; wholeOutput: the text is all
   * a watched run printed, so asking for more of it is no help */
  Engine.prototype.advice = function (query, symptom, wholeOutput, partial, lone) {
    var A = this.adviceTexts, C = this.C, suffix = wholeOutput ? "_output" : "";
    function quoted(message) {
      return pyLen(message) > C.ADVICE_MESSAGE_CHARS ? pyRstrip(pySlice(message, C.ADVICE_MESSAGE_CHARS)) + "\u2026"
        : message;
    }
    if (query.launcherOnly) return A["launcher" + suffix];
    if (symptom !== null && partial && !wholeOutput) return A.partial.split("{message}").join(quoted(symptom));
    if (symptom !== null && lone) {
      return A["symptom_one" + suffix].split("{message}").join(quoted(symptom)).split("{entry}").join(lone);
    }
    if (symptom !== null) return A["symptom" + suffix].split("{message}").join(quoted(symptom));
    var failures = query.messages.filter(function (m) { return m.weight >= C.FAILURE_WEIGHT && m.type; });
    if (failures.length && !query.cut) {
      var last = failures[failures.length - 1];
      return A["exception" + suffix].split("{message}").join(quoted(last.text ? last.type + ": " + last.text : last.type));
    }
    if (query.kind === "traceback") return A["cut" + suffix];
    return query.kind === "log" || wholeOutput ? A["log" + suffix] : A.prose;
  };

  /* _search._result: what a response shows of a scored entry */
  Engine.prototype.result = function (s, confidence) {
    var e = this.entries[s.entry];
    return { id: e.id, title: e.title, area: e.area, score: s.score, confidence: confidence,
             fix_summary: e.fix_summary, tell: null,
             evidence: s.evidence.map(function (ev) {
               return { line: ev.line, text: ev.text, signature: ev.signature, span: ev.span, via: ev.via };
             }) };
  };
  /* _search._vouched: why a cause-naming line answers, the words it matched (which only this cause prints) */
  Engine.prototype.vouched = function (s) {
    var C = this.C, ev = s.evidence.filter(function (e) { return e.namesCause; })[0];
    if (!ev) return null;
    var matched = ev.span ? fromCodePoints(codePoints(ev.text), ev.span[0], ev.span[1]) : pyStrip(ev.text);
    if (pyLen(matched) > C.WHY_CHARS) matched = pyRstrip(pySlice(matched, C.WHY_CHARS)) + "\u2026";
    return C.WHY_VOUCHED.split("{matched}").join(matched);
  };
  function withTell(result, confidence, tell) {
    var out = Object.assign({}, result);
    out.confidence = confidence;
    out.tell = tell;
    return out;
  }

  /* search(text, top, firstLine, output) -> {query_kind, status, abstained, why, candidates, results[{id, title, area,
   * score, confidence, fix_summary, tell, evidence}], advice, symptom}; output: the whole output the text is the tail
   * of (tells read all of it), as _search.search(output=). symptom is SearchResponse.symptom, which --json leaves out:
   * the line a signature matched for the first entry (the browser's triage reads it) */
  Engine.prototype.search = function (text, top, firstLine, output) {
    text = String(text);
    firstLine = firstLine === undefined ? 1 : firstLine;
    var query = this.parser.parse(text, firstLine), ranks = this.teardown(text, query, firstLine);
    if (ranks === null) return this.respond(query, top, output);
    // a silent rank made its peers time out: their teardown is not the failure, and the answer names that rank
    var response = this.respond(this.parser.parse(text, firstLine, ranks.skip), top, output, query);
    if (response.abstained) {
      response.advice = response.symptom !== null && response.advice ? ranks.note + " " + response.advice : ranks.note;
    } else {
      response.why = response.why ? response.why + " " + ranks.note : ranks.note;
    }
    return response;
  };

  /* _ranks.teardown: the victims' teardown when a silent rank made its peers time out, else null. It reads the
   * ranks with triage.js (TrainkbTriage), which every page with a paste box loads beside this file; without it
   * a multi-rank paste is read whole, as it was before triage could say which lines are only consequences */
  Engine.prototype.teardown = function (text, query, firstLine) {
    var C = this.C, T = root.TrainkbTriage;
    var tagged = query.lines.some(function (l) { return l.rank !== null && l.rank !== undefined; });
    if (!T || (!tagged && text.indexOf(C.RANKS_SUMMARY_ROOT) < 0)) return null;
    var found = T.triage(text);
    if (found && found.basis === C.RANKS_OWN_BASIS) return this.ownError(found, query);
    if (!tagged || !found || C.RANKS_SILENT_BASES.indexOf(found.basis) < 0 || !found.culprits.length) return null;
    var timedOut = new Map();
    found.ranks.forEach(function (v) {
      if (v.how === C.RANKS_WAITED && v.line !== null && v.line !== undefined) timedOut.set(v.rank, firstLine - 1 + v.line);
    });
    if (!timedOut.size) return null;
    var first = Math.min.apply(null, Array.from(timedOut.values())), skip = new Set();
    query.lines.forEach(function (l) {
      var rank = l.rank === undefined ? null : l.rank;
      if ((rank !== null && timedOut.has(rank) && l.number > timedOut.get(rank)) || (rank === null && l.number > first)) {
        skip.add(l.number);
      }
    });
    var aborted = query.lines.some(function (l) { return skip.has(l.number) && T.aborted(l.text); });
    // a culprit that timed out itself is not silent: it is behind, and its peers alone are the victims
    var behind = found.culprits.some(function (r) { return timedOut.has(r); });
    var victims = Array.from(timedOut.keys()).filter(function (r) { return found.culprits.indexOf(r) < 0; });
    if (!victims.length) victims = Array.from(timedOut.keys());
    var note = (behind ? C.RANKS_BEHIND_NOTE : C.RANKS_NOTE).split("{culprit}").join(rankList(found.culprits, C))
      .split("{victims}").join(rankList(victims, C))
      .split("{teardown}").join(C.RANKS_TEARDOWN[aborted ? 0 : 1]);
    return { skip: skip, note: note };
  };

  /* _ranks._ranks: sorted, RANKS_RUN or more in a row as a range, in the contract's words */
  function rankList(list, C) {
    list = list.slice().sort(function (a, b) { return a - b; });
    if (list.length === 1) return C.RANKS_ONE.split("{rank}").join(String(list[0]));
    var parts = [], start = 0;
    for (var end = 0; end < list.length; end++) {
      if (end + 1 < list.length && list[end + 1] === list[end] + 1) continue;
      var row = list.slice(start, end + 1);
      if (row.length >= C.RANKS_RUN) {
        parts.push(C.RANKS_SPAN.split("{first}").join(String(row[0])).split("{last}").join(String(row[row.length - 1])));
      } else row.forEach(function (r) { parts.push(String(r)); });
      start = end + 1;
    }
    return C.RANKS_MANY.split("{ranks}").join(parts.join(C.RANKS_JOINER));
  }

  /* _ranks._summary_blocks: line number -> rank, for the untagged lines of each rank's block in torchrun's summary */
  Engine.prototype.summaryBlocks = function (lines) {
    var self = this, owned = new Map(), block = [], rank = null;
    function close() { if (rank !== null) block.forEach(function (n) { owned.set(n, rank); }); }
    lines.forEach(function (line) {
      if (line.rank !== null && line.rank !== undefined) return;
      var opens = self.ranksBlock.test(line.text);
      if (opens || self.ranksRule.test(line.text)) {
        close();
        block = opens ? [line.number] : [];
        rank = null;
      } else if (block.length) {
        block.push(line.number);
        var m = rank === null ? self.ranksBlockRank.exec(line.text) : null;
        if (m) rank = pyInt(m[1]);
      }
    });
    close();
    return owned;
  };

  /* _ranks.own_failure: triage is definite, one rank failed first with its own exception or signal */
  Engine.prototype.ownFailure = function (found) {
    var C = this.C, culprit = found.sole_culprit;
    var verdict = found.ranks.filter(function (v) { return v.rank === found.explained_rank; })[0];
    return found.basis === C.RANKS_OWN_BASIS && culprit !== null && culprit !== undefined && !!verdict &&
      C.RANKS_OWN_HOW.indexOf(verdict.how) >= 0;
  };

  /* _ranks._own: the other ranks' lines when one rank failed first with its own error; null when not definite */
  Engine.prototype.ownError = function (found, query) {
    var culprit = found.sole_culprit, C = this.C;
    if (!this.ownFailure(found)) return null;
    var others = found.ranks.filter(function (v) { return v.rank !== culprit && v.role === "victim"; })
      .map(function (v) { return v.rank; });
    if (!others.length) return null;
    var blocks = this.summaryBlocks(query.lines), skip = new Set();
    query.lines.forEach(function (l) {
      var rank = l.rank === undefined ? null : l.rank;
      if ((rank !== null && others.indexOf(rank) >= 0) || (rank === null && others.indexOf(blocks.get(l.number)) >= 0)) {
        skip.add(l.number);
      }
    });
    if (!skip.size) return null;
    var shown = found.ranks.filter(function (v) { return v.rank === culprit; })[0];
    var said = shown && shown.how === "signal" ? C.RANKS_SIGNAL_NOTE : C.RANKS_OWN_NOTE;
    var note = said.split("{culprit}").join(rankList([culprit], C)).split("{victims}").join(rankList(others, C));
    return { skip: skip, note: note };
  };

  /* _search._confidence: high needs a high score, a clear lead and a signature that names the entry's cause */
  Engine.prototype.confidence = function (score, runnerUp, cause) {
    var C = this.C;
    if (score >= C.HIGH && cause >= C.KNOWN_FAILURE && score - runnerUp >= C.SIGNATURE_LEAD) return "high";
    return score >= C.MEDIUM && cause >= C.SOME_EVIDENCE ? "medium" : "low";
  };

  /* _search._respond: the response for a parsed paste; unskipped: the paste before triage blanked the
   * victims' teardown (tells read all of it) */
  Engine.prototype.respond = function (query, top, output, unskipped) {
    var C = this.C, self = this;
    var scored = this.scoreEntries(query).filter(function (s) { return s.score >= C.MIN_SCORE; });
    var results = scored.map(function (s, rank) {
      var runnerUp = rank === 0 ? (scored.length > 1 ? scored[1].score : 0) : scored[0].score;
      return self.result(s, self.confidence(s.score, runnerUp, s.cause));
    });
    var symptom = scored.length ? scored[0].symptom : null, partial = scored.length ? scored[0].partial : false;
    var cut = Math.max(top === undefined ? 10 : top, 0), whole = output !== undefined && output !== null;
    function response(status, list, advice, why, candidates, line) {
      return { query_kind: query.kind, status: status, abstained: status !== "answered", why: why,
               candidates: candidates, results: list.slice(0, Math.max(cut, candidates)), advice: advice,
               symptom: line === undefined ? symptom : line };
    }
    if (results.length && results[0].confidence !== "low") {  // a cause-naming line
      return response("answered", results, null, this.vouched(scored[0]), 0);
    }
    // the candidates for a symptom: the entries whose signatures matched the same message as the first entry
    // that matched it (entries ranked above it on words or on lines no cause is named by stay in the results,
    // after the candidates)
    var anchor = null;
    for (var k = 0; k < scored.length && anchor === null; k++) {
      var s = scored[k];
      if (s.symptomAt.length || s.evidence.some(function (e) { return e.namesCause; })) anchor = s.symptomAt;
    }
    var at = anchor && anchor.length ? anchor[0] : null, family = [];
    scored.forEach(function (s, i) { if (at !== null && s.symptomAt.indexOf(at) >= 0) family.push(i); });
    if (!family.length) {
      var pkg = this.foreignPackage(query);
      if (pkg !== null) return response("unknown", [], this.adviceTexts.foreign.replace("{package}", pkg), null, 0, null);
      return response("unknown", results, this.advice(query, symptom, whole, partial), null, 0);
    }
    symptom = scored[family[0]].symptom; partial = scored[family[0]].partial;
    var lines = whole ? this.parser.cleanLines(String(output))
      : (unskipped || query).lines.map(function (l) { return l.text; });
    // a line of the paste that points at one entry: a signature few causes print, strongly matched
    function ownLine(e) { return e.via === "signature" && !e.ambiguous && e.strength >= C.KNOWN_FAILURE; }
    // the first tell that fires of each of these ranked entries, for those that have one, in their order
    function firedAmong(among) {
      var out = new Map();
      among.forEach(function (i) {
        var tell = firstFired(self.tells.get(scored[i].entry) || [], lines, self);
        if (tell) out.set(i, tell);
      });
      return out;
    }
    var fired = firedAmong(family);
    if (!fired.size) {  // no member's tell holds: an entry recognised on another line may have the tell that does
      var outside = [];
      scored.forEach(function (s, i) { if (family.indexOf(i) < 0 && s.evidence.some(ownLine)) outside.push(i); });
      var found = firedAmong(outside);
      if (found.size === 1) fired = found;
    }
    if (fired.size === 1) {  // one candidate's tell singles it out
      var i = Array.from(fired.keys())[0], tell = fired.get(i);
      var first = withTell(results[i], results[i].confidence === "low" ? "medium" : results[i].confidence,
                           { says: tell.says, fired: true });
      return response("answered", [first].concat(results.filter(function (_r, j) { return j !== i; })), null,
                      tell.says, 0, scored[i].symptom);
    }
    function firstTell(i) {
      var tells = self.tells.get(scored[i].entry);
      return tells && tells.length ? { says: tells[0].says, fired: false } : null;
    }
    var chosen = fired.size ? Array.from(fired.keys()) : family.slice(0, C.MAX_CANDIDATES);
    if (chosen.length < C.MIN_CANDIDATES) {  // one known cause among unknown others: the closest entry, unconfirmed
      var only = withTell(results[chosen[0]], results[chosen[0]].confidence, firstTell(chosen[0]));
      return response("unknown", [only].concat(results.filter(function (_r, j) { return j !== chosen[0]; })),
                      this.advice(query, symptom, whole, partial, only.id), null, 0);
    }
    chosen = chosen.slice(0, C.MAX_CANDIDATES);
    var candidates = chosen.map(function (i) {
      return withTell(results[i], results[i].confidence, fired.has(i) ? { says: fired.get(i).says, fired: true } : firstTell(i));
    });
    var rest = results.filter(function (_r, j) { return chosen.indexOf(j) < 0; });
    return response("differential", candidates.concat(rest), this.advice(query, symptom, whole, partial), null,
                    candidates.length);  // a differential is all its candidates, whatever the cut
  };

  var api = { Engine: Engine, CONTRACT: CONTRACT, checkContract: checkContract, partialRatio: partialRatio,
              alignment: alignment, round1: round1 };
  root.TrainkbEngine = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
