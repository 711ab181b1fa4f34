/* trainkb search engine, ported from src/trainkb/search/ (parse -> normalise -> score).
 *
 * Everything that depends on the catalogue or that the Python engine may retune (regexes,
 * thresholds, weights, signature specificity, BM25 postings) comes from the exported index
 * (window.TRAINKB_INDEX.search); this file only mirrors the algorithm. Keep it in step with
 * _input.py, _normalize.py and _score.py: tests/site/test_parity.py compares top-1 results.
 */
(function (root) {
  "use strict";

  function re(spec, extra) {
    return new RegExp(spec[0], spec[1] + (extra || ""));
  }

  /* Python's pattern.match(): anchored at the start of the string. */
  function matchStart(sticky, text) {
    sticky.lastIndex = 0;
    return sticky.exec(text);
  }

  function pyStrip(text) { return text.replace(/^\s+|\s+$/g, ""); }
  function pyRstrip(text) { return text.replace(/\s+$/, ""); }
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
    this.stop = new Set(C.STOP);
  }
  Normalizer.prototype.normalize = function (line) {
    var out = line;
    for (var i = 0; i < this.masks.length; i++) out = out.replace(this.masks[i][1], this.masks[i][0]);
    return pyStrip(out.replace(this.spaces, " ")).toLowerCase();
  };
  var SUFFIXES = ["ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e"];
  function stem(word) {
    if (word.length <= 4 || word.indexOf("_") >= 0) return word;
    for (var i = 0; i < SUFFIXES.length; i++) {
      var s = SUFFIXES[i];
      if (word.endsWith(s) && word.length - s.length >= 4) return word.slice(0, -s.length);
    }
    return word;
  }
  Normalizer.prototype.terms = function (text) {
    for (var i = 0; i < 2; i++) text = text.replace(this.masks[i][1], " ");
    var words = text.toLowerCase().match(this.word) || [];
    var out = [];
    for (var j = 0; j < words.length; j++) {
      var word = words[j];
      if (this.stop.has(word)) continue;
      out.push(stem(word));
      if (word.indexOf("_") >= 0) {
        var parts = word.split("_");
        for (var k = 0; k < parts.length; k++) {
          if (parts[k].length > 2 && !this.stop.has(parts[k])) out.push(stem(parts[k]));
        }
      }
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
    this.chain = re(P.CHAIN);
    this.excLine = re(P.EXC_LINE, "y");
    this.warnLine = re(P.WARN_LINE, "y");
    this.excInline = re(P.EXC_INLINE);
    this.ncclLine = re(P.NCCL_LINE);
    this.wrapper = re(P.WRAPPER, "y");
    this.rootCause = re(P.ROOT_CAUSE);
    this.field = re(P.FIELD, "y");
    this.loggy = re(P.LOGGY);
    this.sentence = re(P.SENTENCE, "g");
    this.wrapperTypes = new Set(C.WRAPPER_TYPES);
  }

  Parser.prototype.cap = function (text) {
    var C = this.C, dropped = 0;
    if (text.length > C.MAX_CHARS) {
      var cut = text.length - C.MAX_CHARS;
      var newline = text.indexOf("\n", cut);
      cut = newline >= 0 && newline < cut + 2000 ? newline + 1 : cut;
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
    raw = raw.slice(0, C.MAX_LINE_CHARS * 2).replace(this.ansi, "").replace(this.control, "");
    var rank = null;
    for (var i = 0; i < 3; i++) {
      var m = matchStart(this.prefix, raw);
      if (!m || !m[0]) break;
      if (m[1] !== undefined) rank = parseInt(m[1], 10);
      raw = raw.slice(m[0].length);
    }
    return [pyRstrip(raw.replace(this.box, "").slice(0, C.MAX_LINE_CHARS)), rank];
  };

  Parser.prototype.split = function (text) {
    var capped = this.cap(text), parts = capped[0].split("\n"), lines = [];
    for (var i = 0; i < parts.length; i++) {
      var c = this.clean(parts[i]);
      lines.push({ number: capped[1] + i + 1, text: c[0], rank: c[1], role: "text" });
    }
    return lines;
  };

  Parser.prototype.exceptionAt = function (text, inTraceback) {
    var stripped = stripChars(pyStrip(text), "`");
    var pats = [this.warnLine, this.excLine];
    for (var i = 0; i < 2; i++) {
      var m = matchStart(pats[i], stripped);
      if (m && (m.groups.msg || inTraceback || i === 0 || m.groups.type.indexOf(".") >= 0)) {
        return [m.groups.type, pyStrip(m.groups.msg || "")];
      }
    }
    var inline = this.excInline.exec(stripped);
    if (inline) return [inline.groups.type, rstripChars(pyStrip(inline.groups.msg), "`'\"")];
    var nccl = this.ncclLine.exec(stripped);
    if (nccl) return ["NCCLError", rstripChars(pyStrip(nccl.groups.msg), "`'\"")];
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
      var runsOn = inTb || !message || message.endsWith(":");
      i++;
      while (i < lines.length && extra < C.MAX_CONTINUATION && !this.isStructural(lines[i].text) &&
             (runsOn || /^\s/.test(lines[i].text)) &&
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
      }
    }
    return [out, found];
  };

  Parser.prototype.rootCauseOf = function (lines) {
    for (var index = 0; index < lines.length; index++) {
      if (!this.rootCause.test(lines[index].text)) continue;
      var rank = null, extra = [];
      for (var j = index + 1; j < Math.min(index + 14, lines.length); j++) {
        var m = matchStart(this.field, lines[j].text);
        if (!m) continue;
        if (m[1] === "rank") {
          var digits = /^\d+/.exec(m[2]);
          rank = digits ? parseInt(digits[0], 10) : null;
        } else if (m[1] === "traceback" && m[2].indexOf("enable traceback") < 0) {
          extra.push([pyStrip(m[2]), j]);
        }
      }
      return [rank, extra];
    }
    return [null, []];
  };

  Parser.prototype.weigh = function (lines, found) {
    var self = this, rc = this.rootCauseOf(lines), rootRank = rc[0];
    var real = found.filter(function (f) {
      var parts = f[0].split(".");
      return !self.wrapperTypes.has(parts[parts.length - 1]) && !matchStart(self.wrapper, f[1]);
    });
    if (rootRank !== null && real.some(function (f) { return lines[f[2]].rank === rootRank; })) {
      real = real.filter(function (f) { return lines[f[2]].rank === rootRank; });
    }
    var lastBlock = real.length ? real[real.length - 1][3] : -1;
    var isReal = new Set(real.map(function (f) { return f[2]; }));
    var messages = found.map(function (f) {
      var weight = !isReal.has(f[2]) ? 0.5 : f[3] === lastBlock ? 1.0 : 0.9;
      return { type: f[0], text: f[1], line: f[2], weight: weight };
    });
    rc[1].forEach(function (e) { messages.push({ type: null, text: e[0], line: e[1], weight: 1.0 }); });
    return messages;
  };

  Parser.prototype.kind = function (lines, messages) {
    var self = this;
    if (lines.some(function (l) { return l.role === "header" || l.role === "frame"; }) ||
        messages.some(function (m) { return (m.type || "").endsWith("ChildFailedError"); })) return "traceback";
    var loggy = 0, wordy = 0;
    lines.forEach(function (l) {
      var isLoggy = self.loggy.test(l.text);
      if (l.role === "message" || isLoggy) loggy++;
      if (l.role === "text" && (l.text.match(self.sentence) || []).length >= 6 && !isLoggy) wordy++;
    });
    return loggy && loggy >= wordy ? "log" : "prose";
  };

  Parser.prototype.parse = function (text) {
    var collected = this.collect(this.split(String(text)));
    var lines = collected[0], messages = this.weigh(lines, collected[1]);
    var prose = lines.filter(function (l) { return l.role === "text" || l.role === "message"; })
      .map(function (l) { return l.text; }).join("\n");
    return { kind: this.kind(lines, messages), lines: lines, messages: messages, prose: prose };
  };

  /* ---- rapidfuzz partial_ratio (optimal alignment), on a bit-parallel LCS ---- */

  function Needle(s1) {
    this.s = s1;
    this.words = Math.max(1, Math.ceil(s1.length / 32));
    this.pm = new Map();
    this.chars = new Set();
    for (var i = 0; i < s1.length; i++) {
      var c = s1.charCodeAt(i);
      this.chars.add(c);
      var v = this.pm.get(c);
      if (!v) { v = new Uint32Array(this.words); this.pm.set(c, v); }
      v[i >>> 5] |= 1 << (i & 31);
    }
    this.v = new Uint32Array(this.words);
  }
  /* LCS length of the needle and s2[from:to] (Hyyro's bit-vector algorithm). */
  Needle.prototype.lcs = function (s2, from, to) {
    var w = this.words, V = this.v, k;
    for (k = 0; k < w; k++) V[k] = 0xFFFFFFFF;
    for (var j = from; j < to; j++) {
      var M = this.pm.get(s2.charCodeAt(j));
      if (!M) continue;
      var carry = 0;
      for (k = 0; k < w; k++) {
        var u = (V[k] & M[k]) >>> 0;
        var sum = V[k] + u + carry;
        carry = sum > 0xFFFFFFFF ? 1 : 0;
        V[k] = ((sum >>> 0) | (V[k] & ~u)) >>> 0;
      }
    }
    var len = this.s.length, zeros = 0;
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
  Needle.prototype.ratio = function (s2, from, to) {
    var total = this.s.length + (to - from);
    return total ? (2 * this.lcs(s2, from, to)) / total : 1;
  };

  function partialImpl(s1, s2) {
    var needle = new Needle(s1), len1 = s1.length, len2 = s2.length, best = 0, r, i;
    for (i = 1; i < len1; i++) {
      if (!needle.chars.has(s2.charCodeAt(i - 1))) continue;
      r = needle.ratio(s2, 0, i);
      if (r > best) { best = r; if (best === 1) return 1; }
    }
    for (i = 0; i < len2 - len1; i++) {
      if (!needle.chars.has(s2.charCodeAt(i + len1 - 1))) continue;
      r = needle.ratio(s2, i, i + len1);
      if (r > best) { best = r; if (best === 1) return 1; }
    }
    for (i = Math.max(0, len2 - len1); i < len2; i++) {
      if (!needle.chars.has(s2.charCodeAt(i))) continue;
      r = needle.ratio(s2, i, len2);
      if (r > best) { best = r; if (best === 1) return 1; }
    }
    return best;
  }

  function partialRatio(a, b, cutoff) {
    if (!a && !b) return 100;
    if (!a || !b) return 0;
    var shorter = a.length <= b.length ? a : b, longer = shorter === a ? b : a;
    var score = partialImpl(shorter, longer) * 100;
    if (score !== 100 && a.length === b.length) score = Math.max(score, partialImpl(longer, shorter) * 100);
    return score >= cutoff ? score : 0;
  }

  /* ---- score (_score.py) ---- */

  function Engine(data) {
    var C = data.constants, P = data.patterns;
    this.C = C;
    this.norm = new Normalizer(C, P);
    this.parser = new Parser(C, P);
    this.entries = data.entries;
    this.sigs = data.sigs.map(function (s) {
      return { entry: s.entry, source: s.source, regex: re(s.regex, "g"), literal: s.literal, type: s.type,
               texts: s.texts, nterms: s.terms.length, spec: s.spec, required: s.required };
    });
    this.aliases = data.aliases;  // entry -> [[words, idf total], ...]
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
  function typeBonus(sig, message) {
    if (!sig.type || !message || !message.type) return 0;
    return lastPart(sig.type) === lastPart(message.type) ? 3.0 : 0;
  }
  function addHit(hits, entry, ev) {
    if (!hits.has(entry)) hits.set(entry, []);
    hits.get(entry).push(ev);
  }

  Engine.prototype.exact = function (query) {
    var C = this.C, lines = query.lines, own = owners(query), self = this;
    var weights = lines.map(function (line, i) {
      return own[i] ? own[i].weight : (C.ROLE_WEIGHT[line.role] !== undefined ? C.ROLE_WEIGHT[line.role] : 0.85);
    });
    var raw = lines.map(function (l) { return l.text; }).join("\n");
    var starts = [], pos = 0;
    lines.forEach(function (l) { starts.push(pos); pos += l.text.length + 1; });
    var masked = null, hits = new Map();
    function lineAt(offset) {  // bisect_right(starts, offset) - 1
      var lo = 0, hi = starts.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (offset < starts[mid]) hi = mid; else lo = mid + 1; }
      return lo - 1;
    }
    var present = new Set(this.norm.terms(raw)), numbers = new Set(this.ungated), gate = this.gate;
    present.forEach(function (term) {
      if (Object.prototype.hasOwnProperty.call(gate, term)) gate[term].forEach(function (n) { numbers.add(n); });
    });
    Array.from(numbers).sort(function (a, b) { return a - b; }).forEach(function (number) {
      var sig = self.sigs[number], found = [], m;
      if (!sig.required.every(function (w) { return present.has(w); })) return;
      sig.regex.lastIndex = 0;
      while ((m = sig.regex.exec(raw)) !== null) {
        if (m[0].length === 0) sig.regex.lastIndex++;
        var at = lineAt(m.index);
        found.push([at, [m.index - starts[at], Math.min(m.index + m[0].length - starts[at], lines[at].text.length)]]);
        if (found.length >= C.MAX_HITS_PER_SIG) break;
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
                                  signature: sig.source, span: f[1], at: at,
                                  strength: 96.0 * weights[at] * sig.spec + typeBonus(sig, own[at]) });
      });
    });
    return hits;
  };

  Engine.prototype.segments = function (query) {
    var C = this.C, own = owners(query);
    var out = query.messages.map(function (m) { return [m.line, m.text, m.weight, m]; });
    var plain = [];
    query.lines.forEach(function (line, i) {
      if (line.role === "text" && own[i] === null && line.text.length >= 16) plain.push(i);
    });
    plain.slice(-C.MAX_TEXT_SEGMENTS).forEach(function (i) {
      out.push([i, query.lines[i].text, C.ROLE_WEIGHT.text, null]);
    });
    return out;
  };

  Engine.prototype.fuzzy = function (query) {
    var C = this.C, self = this, hits = new Map(), floor = C.FUZZY_FLOOR;
    this.segments(query).forEach(function (seg) {
      var raw = seg[1].slice(0, C.MAX_LINE_CHARS), text = self.norm.normalize(raw);
      if (text.length < 12) return;
      var overlap = new Map();
      new Set(self.norm.terms(raw)).forEach(function (word) {
        var list = Object.prototype.hasOwnProperty.call(self.sigTerms, word) ? self.sigTerms[word] : [];
        list.forEach(function (n) { overlap.set(n, (overlap.get(n) || 0) + 1); });
      });
      overlap.forEach(function (shared, number) {
        var sig = self.sigs[number];
        if (shared < Math.max(2, 0.5 * sig.nterms)) return;
        var best = 0;
        sig.texts.forEach(function (candidate) {
          var ratio = partialRatio(candidate, text, floor);
          if (!ratio) return;
          var coverage = Math.min(text.length, candidate.length) / Math.max(candidate.length, 1);
          best = Math.max(best, (ratio - floor) / (100 - floor) * Math.sqrt(coverage));
        });
        if (best > 0) {
          var line = query.lines[seg[0]];
          addHit(hits, sig.entry, { line: line.number, text: pyStrip(line.text), signature: sig.source, span: null,
                                    at: seg[0], strength: 90.0 * best * seg[2] * sig.spec + typeBonus(sig, seg[3]) });
        }
      });
    });
    return hits;
  };

  /* heapq.nlargest(n, keys, key): a stable sort, largest first */
  function nlargest(n, keys, value) {
    return keys.slice().sort(function (a, b) { return value(b) - value(a); }).slice(0, n);
  }

  Engine.prototype.bm25 = function (queryTerms) {
    var counts = new Map(), scores = new Map(), self = this, idf = this.idf;
    queryTerms.forEach(function (t) {
      if (Object.prototype.hasOwnProperty.call(idf, t)) counts.set(t, (counts.get(t) || 0) + 1);
    });
    nlargest(this.C.MAX_QUERY_TERMS, Array.from(counts.keys()), function (t) { return idf[t]; }).forEach(function (term) {
      var boost = idf[term] * Math.sqrt(Math.min(counts.get(term), 4));
      self.postings[term].forEach(function (p) { scores.set(p[0], (scores.get(p[0]) || 0) + boost * p[1]); });
    });
    return scores;
  };

  Engine.prototype.aliasCover = function (queryTerms, candidates) {
    var best = new Map(), idf = this.idf, aliases = this.aliases;
    candidates.forEach(function (entry) {
      (aliases[entry] || []).forEach(function (a) {
        var words = a[0], total = a[1];
        if (words.length < 2 || total <= 0) return;
        var cover = 0;
        words.forEach(function (w) { if (queryTerms.has(w)) cover += idf[w] || 0; });
        cover = (cover / total) * Math.min(1.0, words.length / 4);
        best.set(entry, Math.max(best.get(entry) || 0, cover));
      });
    });
    return best;
  };

  Engine.prototype.prose = function (query) {
    var queryTerms = this.norm.terms(query.prose), raw = this.bm25(queryTerms), out = new Map();
    if (!raw.size) return out;
    var top = 0;
    raw.forEach(function (value) { top = Math.max(top, value); });
    var candidates = nlargest(this.C.PROSE_CANDIDATES, Array.from(raw.keys()), function (d) { return raw.get(d); });
    var covered = this.aliasCover(new Set(queryTerms), candidates);
    var strength = 1 - Math.exp(-top / 18.0);
    candidates.forEach(function (doc) {
      var relative = raw.get(doc) / top;
      out.set(doc, 100.0 * (0.55 * strength * relative * relative + 0.45 * (covered.get(doc) || 0) * relative));
    });
    return out;
  };

  function round1(x) { return Math.round(x * 10) / 10; }

  Engine.prototype.score = function (query) {
    var C = this.C, exact = this.exact(query), fuzzy = this.fuzzy(query), prose = this.prose(query), self = this;
    var own = owners(query);
    var known = !query.messages.some(function (m) { return m.weight >= 1.0 && m.type; });
    [exact, fuzzy].forEach(function (found) {
      found.forEach(function (evs) {
        evs.forEach(function (ev) {
          if (ev.strength >= C.KNOWN_FAILURE && own[ev.at] && own[ev.at].weight >= 1.0) known = true;
        });
      });
    });
    var ids = new Set(); [exact, fuzzy, prose].forEach(function (m) { m.forEach(function (_v, k) { ids.add(k); }); });
    var scored = [];
    ids.forEach(function (entry) {
      var evidence = (exact.get(entry) || []).concat(fuzzy.get(entry) || []);
      evidence.sort(function (a, b) { return b.strength - a.strength; });
      var signature = evidence.length ? evidence[0].strength : 0;
      var distinct = new Set(evidence.map(function (e) { return e.signature; })).size;
      signature = Math.min(100, signature + 2.0 * Math.max(distinct - 1, 0));
      var text = prose.get(entry) || 0;
      if (!known) text = Math.min(text, C.UNKNOWN_ERROR_CAP);
      var total = Math.min(100, Math.max(signature, text) + 0.12 * Math.min(signature, text));
      scored.push({ entry: entry, score: round1(total), prose: text, evidence: dedupe(evidence) });
    });
    scored.sort(function (a, b) {
      if (a.score !== b.score) return b.score - a.score;
      if (a.prose !== b.prose) return b.prose - a.prose;
      var x = self.entries[a.entry].id, y = self.entries[b.entry].id;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    return scored;
  };

  function dedupe(evidence) {
    var seen = new Set(), out = [];
    evidence.forEach(function (e) {
      var key = e.line + "\u0000" + e.signature;
      if (!seen.has(key)) { seen.add(key); out.push(e); }
    });
    return out.slice(0, 5);
  }

  /* search(text, top) -> {query_kind, abstained, results[{id, title, area, score, confidence, evidence}]} */
  Engine.prototype.search = function (text, top) {
    var C = this.C, self = this, query = this.parser.parse(text), scored = this.score(query);
    /* high needs a high score and a clear lead; a lead built on words alone must be wider */
    function confidence(score, runnerUp, evidenced) {
      if (score >= C.HIGH && score - runnerUp >= (evidenced ? C.SIGNATURE_LEAD : C.PROSE_LEAD)) return "high";
      return score >= C.MEDIUM ? "medium" : "low";
    }
    var results = scored.slice(0, Math.max(top === undefined ? 10 : top, 0)).map(function (s, rank) {
      var e = self.entries[s.entry];
      var runnerUp = rank === 0 ? (scored.length > 1 ? scored[1].score : 0) : scored[0].score;
      return { id: e.id, title: e.title, area: e.area, score: s.score,
               confidence: confidence(s.score, runnerUp, s.evidence.length > 0), evidence: s.evidence };
    });
    var abstained = !scored.length || confidence(scored[0].score, 0, true) === "low";
    return { query_kind: query.kind, abstained: abstained, results: results };
  };

  var api = { Engine: Engine, partialRatio: partialRatio, stem: stem };
  root.TrainkbEngine = api;
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof window !== "undefined" ? window : globalThis);
