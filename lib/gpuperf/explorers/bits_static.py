"""The bit explorer on the static site: a small JavaScript front end, because its state space (every bit
pattern of FP32, every typed value) cannot be precomputed.

The JavaScript below re-implements, for the browser, exactly these Python functions of
:mod:`gpuperf.formats` and :mod:`gpuperf.explorers.bits`: ``decode``, ``round_to_format`` (default overflow),
``overflows``, ``encode``, ``fields(...).bit_string``, ``describe_pattern(...).html()``,
``store_in_format``, ``format_rows_html``, ``parse_value`` and Python's ``repr`` and ``format(x, ".3g")``
of floats. The format parameters come from Python (:func:`format_table`). ``tests/browser/`` runs it in
Chromium against the Python functions on every code of every format of at most 8 bits, a sample of the
16- and 32-bit codes, and a set of typed values (ties, overflow boundaries, subnormals, specials).
It also defines ``window.gpuperfBits`` (those functions) for that test.
"""

from __future__ import annotations

import html
import json
import uuid
from typing import Sequence

from gpuperf import formats

FIELD_COLOURS = {"sign": "#d9534f", "exponent": "#3c9a5f", "mantissa": "#3a87ad"}


def format_table(fmts: Sequence[str]) -> list[dict]:
    """The parameters the JavaScript needs, per format (data, computed by :mod:`gpuperf.formats`)."""
    out = []
    for name in fmts:
        f = formats.get_format(name)
        out.append({
            "name": f.name, "E": f.exponent_bits, "M": f.mantissa_bits, "bias": f.bias, "specials": f.specials,
            "signed": f.signed, "overflow": f.default_overflow, "total": f.total_bits,
            "maxValue": f.max_value, "minNormal": f.min_normal, "minSubnormal": f.min_subnormal,
            "minExponent": f.min_exponent, "hasNan": f.has_nan, "hasZero": f.has_zero,
            "hasSubnormals": f.has_subnormals,
        })
    return out


BITS_JS = r"""
(function () {
if (window.gpuperfBits) { return; }
var DV = new DataView(new ArrayBuffer(8));
function frexpExp(x) {             // k with x = f * 2^k, f in [0.5, 1); x > 0 finite (numpy.frexp)
  DV.setFloat64(0, x); var e = (DV.getUint16(0) >> 4) & 0x7ff;
  if (e === 0) { DV.setFloat64(0, x * Math.pow(2, 64)); e = ((DV.getUint16(0) >> 4) & 0x7ff) - 64; }
  return e - 1022;
}
function ldexp(x, n) {
  while (n > 1000) { x *= Math.pow(2, 1000); n -= 1000; }
  while (n < -1000) { x *= Math.pow(2, -1000); n += 1000; }
  return x * Math.pow(2, n);
}
function rint(v) {                 // round half to even (numpy.rint)
  var f = Math.floor(v), d = v - f;
  if (d < 0.5) { return f; }
  if (d > 0.5) { return f + 1; }
  return (f % 2 === 0) ? f : f + 1;
}
function signbit(x) { return x < 0 || Object.is(x, -0); }
function roundUnbounded(x, f) {    // _round_magnitude_unbounded
  if (!isFinite(x)) { return 0; }
  var a = Math.abs(x);
  var e = a === 0 ? f.minExponent : Math.max(frexpExp(a) - 1, f.minExponent);
  var q = e - f.M;
  return ldexp(rint(ldexp(a, -q)), q);
}
function overflows(x, f) {
  if (Number.isNaN(x)) { return false; }
  return !isFinite(x) || roundUnbounded(x, f) > f.maxValue;
}
function roundToFormat(x, f) {
  var r = roundUnbounded(x, f);
  if (overflows(x, f)) { r = f.overflow === 'saturate' ? f.maxValue : (f.overflow === 'inf' ? Infinity : NaN); }
  if (!f.hasZero && r === 0) { r = f.minSubnormal; }
  if (f.signed) { r = signbit(x) ? -Math.abs(r) : Math.abs(r); }
  if (Number.isNaN(x)) { r = NaN; }
  if (!f.signed && x < 0) { r = NaN; }
  return r;
}
function encodeRounded(r, f) {     // encode() of an already rounded value; null if it cannot be encoded
  var isNan = Number.isNaN(r), isInf = !isNan && !isFinite(r);
  if (isNan && !f.hasNan) { return null; }
  var top = Math.pow(2, f.E) - 1, ef, mf;
  if (isNan) { ef = top; mf = f.specials === 'ieee' ? Math.pow(2, f.M - 1) : Math.pow(2, f.M) - 1; }
  else if (isInf) { ef = top; mf = 0; }
  else {
    var a = Math.abs(r);
    if (a >= f.minNormal) {
      var e = frexpExp(a) - 1;
      ef = e + f.bias; mf = ldexp(a, f.M - e) - Math.pow(2, f.M);
    } else { ef = 0; mf = ldexp(a, f.M - f.minExponent); }
  }
  var bits = ef * Math.pow(2, f.M) + mf;
  if (f.signed && signbit(r) && !isNan) { bits += Math.pow(2, f.E + f.M); }
  return bits;
}
function encode(x, f) { return encodeRounded(roundToFormat(x, f), f); }
function decode(p, f) {
  var M2 = Math.pow(2, f.M), mf = p % M2, ef = Math.floor(p / M2) % Math.pow(2, f.E), v;
  if (f.hasSubnormals) { v = ldexp(ef === 0 ? mf : mf + M2, Math.max(ef, 1) - f.bias - f.M); }
  else { v = ldexp(1, ef - f.bias); }
  var top = ef === Math.pow(2, f.E) - 1;
  if (f.specials === 'ieee' && top) { v = mf === 0 ? Infinity : NaN; }
  else if (f.specials === 'fn' && top && mf === M2 - 1) { v = NaN; }
  if (f.signed && Math.floor(p / Math.pow(2, f.E + f.M)) % 2 === 1) { v = -v; }
  return v;
}
function binary(n, width) { var s = n.toString(2); while (s.length < width) { s = '0' + s; } return s; }
function fieldsOf(p, f) {
  var M2 = Math.pow(2, f.M), mf = p % M2, ef = Math.floor(p / M2) % Math.pow(2, f.E);
  var sign = f.signed ? Math.floor(p / Math.pow(2, f.E + f.M)) % 2 : 0;
  var groups = [binary(ef, f.E)];
  if (f.signed) { groups.unshift(String(sign)); }
  if (f.M) { groups.push(binary(mf, f.M)); }
  return {sign: sign, e: ef, m: mf, bitString: groups.join(' '), value: decode(p, f), bits: p};
}
function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}
function pyRepr(x) {               // Python's repr(float)
  if (Number.isNaN(x)) { return 'NaN'; }
  if (!isFinite(x)) { return x < 0 ? '-inf' : 'inf'; }
  if (x === 0) { return Object.is(x, -0) ? '-0.0' : '0.0'; }
  var s = Math.abs(x).toExponential(), i = s.indexOf('e');
  var digits = s.slice(0, i).replace('.', ''), e = parseInt(s.slice(i + 1), 10), out;
  if (e < -4 || e >= 16) {
    out = digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '') + 'e' + (e < 0 ? '-' : '+') +
      (Math.abs(e) < 10 ? '0' : '') + Math.abs(e);
  } else if (e < 0) { out = '0.' + '0'.repeat(-e - 1) + digits; }
  else if (digits.length <= e + 1) { out = digits + '0'.repeat(e + 1 - digits.length) + '.0'; }
  else { out = digits.slice(0, e + 1) + '.' + digits.slice(e + 1); }
  return (x < 0 ? '-' : '') + out;
}
function exactDecimal(a) {         // a > 0 finite: [digit string, exponent of its first digit]
  DV.setFloat64(0, a);
  var hi = DV.getUint32(0), lo = DV.getUint32(4), be = (hi >>> 20) & 0x7ff;
  var mant = BigInt(hi & 0xfffff) * 4294967296n + BigInt(lo), e2;
  if (be === 0) { e2 = -1074; } else { mant += 4503599627370496n; e2 = be - 1075; }
  var digits, point;               // value = digits * 10^point
  if (e2 >= 0) { digits = (mant * (1n << BigInt(e2))).toString(); point = 0; }
  else { digits = (mant * (5n ** BigInt(-e2))).toString(); point = e2; }
  return [digits, digits.length - 1 + point];
}
function roundDigits(digits, p) {  // the first p digits, rounded half to even; [digits, carried]
  if (digits.length <= p) { return [digits + '0'.repeat(p - digits.length), 0]; }
  var head = digits.slice(0, p), rest = digits.slice(p), up;
  if (rest[0] > '5') { up = true; }
  else if (rest[0] < '5') { up = false; }
  else if (/[1-9]/.test(rest.slice(1))) { up = true; }
  else { up = (parseInt(head[head.length - 1], 10) % 2) === 1; }
  if (!up) { return [head, 0]; }
  var n = (BigInt(head) + 1n).toString();
  return n.length > p ? [n.slice(0, p), 1] : [n, 0];
}
function pyG(x, p) {               // Python's format(x, '.{p}g')
  if (Number.isNaN(x)) { return 'nan'; }
  if (!isFinite(x)) { return x < 0 ? '-inf' : 'inf'; }
  if (x === 0) { return Object.is(x, -0) ? '-0' : '0'; }
  var ex = exactDecimal(Math.abs(x)), r = roundDigits(ex[0], p), d = r[0], X = ex[1] + r[1], out;
  if (X >= -4 && X < p) {
    if (X >= 0) { out = d.slice(0, X + 1) + (d.length > X + 1 ? '.' + d.slice(X + 1) : ''); }
    else { out = '0.' + '0'.repeat(-X - 1) + d; }
    if (out.indexOf('.') >= 0) { out = out.replace(/0+$/, '').replace(/\.$/, ''); }
  } else {
    var m = d[0] + (p > 1 ? '.' + d.slice(1) : '');
    if (m.indexOf('.') >= 0) { m = m.replace(/0+$/, '').replace(/\.$/, ''); }
    out = m + 'e' + (X < 0 ? '-' : '+') + (Math.abs(X) < 10 ? '0' : '') + Math.abs(X);
  }
  return (x < 0 ? '-' : '') + out;
}
function hex(p, f) {
  var s = p.toString(16).toUpperCase(), w = Math.floor((f.total + 3) / 4);
  while (s.length < w) { s = '0' + s; }
  return s;
}
function describe(p, f) {          // describe_pattern(p, f).html()
  var fl = fieldsOf(p, f), M = f.M, e = fl.e, m = fl.m, s = fl.sign, kind, formula;
  var sign = f.signed ? '(-1)^' + s + ' \u00d7 ' : '';
  if (Number.isNaN(fl.value)) { kind = 'NaN'; formula = 'a NaN code: not a number'; }
  else if (!isFinite(fl.value)) { kind = 'infinity'; formula = 'exponent field all ones, mantissa 0: ' + pyRepr(fl.value); }
  else if (!f.hasSubnormals) { kind = 'normal'; formula = '2^(' + e + ' - ' + f.bias + ') = ' + pyRepr(fl.value); }
  else if (e === 0) {
    kind = m === 0 ? 'zero' : 'subnormal';
    formula = sign + '2^(1 - ' + f.bias + ') \u00d7 (' + m + '/' + Math.pow(2, M) + ') = ' + pyRepr(fl.value) +
      '   (no hidden 1)';
  } else {
    kind = 'normal';
    formula = sign + '2^(' + e + ' - ' + f.bias + ') \u00d7 (1 + ' + m + '/' + Math.pow(2, M) + ') = ' + pyRepr(fl.value);
  }
  var parts = ['<b>' + esc(f.name) + '</b> bits <code>' + esc(fl.bitString) + '</code> (0x' + hex(p, f) +
    ') &rarr; <b>' + esc(pyRepr(fl.value)) + '</b> &nbsp;[' + kind + ']'];
  var detail = [];
  if (f.signed) { detail.push('sign s = ' + s); }
  detail.push('exponent field e = ' + e + ' (bias ' + f.bias + ')');
  if (M) { detail.push('mantissa field m = ' + m + ' of 2<sup>' + M + '</sup>'); }
  parts.push(detail.join(', '));
  parts.push('<code>' + esc(formula) + '</code>');
  return parts.join('<br>');
}
function storeIn(x, f) {           // store_in_format(x, f): [name, stored, bitString, rel, note]
  var stored = roundToFormat(x, f), rel, note;
  if (Number.isNaN(stored) && !f.hasNan) { return [f.name, stored, '\u2014', NaN, 'not representable (no NaN in this format)']; }
  var bitString = fieldsOf(encodeRounded(stored, f), f).bitString;
  if (Number.isNaN(stored) && !Number.isNaN(x)) {
    return [f.name, stored, bitString, NaN, (x < 0 && !f.signed) ? 'negative: no sign bit' : 'overflow to NaN'];
  }
  if (Number.isNaN(x)) { note = 'NaN'; rel = NaN; }
  else if (!isFinite(stored) && isFinite(x)) { note = 'overflow to inf'; rel = Infinity; }
  else if (!isFinite(x)) { note = !isFinite(stored) ? 'inf' : 'saturated to the largest value'; rel = NaN; }
  else if (x === 0 && stored !== 0) { note = 'no zero in this format: its smallest value'; rel = NaN; }
  else {
    rel = x === 0 ? 0 : Math.abs(stored - x) / Math.abs(x);
    if (stored === x) { note = 'exact'; }
    else if (overflows(x, f)) { note = 'saturated to the largest value'; }
    else if (stored === 0) { note = 'underflow to zero'; }
    else if (Math.abs(stored) < f.minNormal) { note = 'rounded (subnormal)'; }
    else { note = 'rounded'; }
  }
  return [f.name, stored, bitString, rel, note];
}
function rowsHtml(x, fmts) {       // format_rows_html(x, fmts)
  var head = ['format', 'bits (sign exponent mantissa)', 'stored value', 'relative error', ''];
  var out = ['<table class="gpuperf-table dataframe">',
    '<caption>' + esc(pyRepr(x)) + ' in every format</caption>',
    '<thead><tr>' + head.map(function (h) { return '<th>' + h + '</th>'; }).join('') + '</tr></thead><tbody>'];
  fmts.forEach(function (f) {
    var r = storeIn(x, f), rel = Number.isNaN(r[3]) ? '\u2014' : pyG(r[3], 3);
    out.push('<tr><td>' + esc(r[0]) + '</td><td><code>' + esc(r[2]) + '</code></td>' +
      '<td style="text-align:right">' + esc(pyRepr(r[1])) + '</td>' +
      '<td style="text-align:right">' + rel + '</td><td>' + esc(r[4]) + '</td></tr>');
  });
  out.push('</tbody></table>');
  return out.join('\n');
}
function parseValue(text) {        // parse_value(text); throws Error with Python's message
  var s = String(text).trim().replace(/_/g, '').replace(/,/g, '');
  var num = /^[+-]?((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|inf|infinity|nan)$/i;
  function one(t) {
    t = t.trim();
    if (!num.test(t)) { throw new Error('bad'); }
    var l = t.toLowerCase().replace(/^\+/, '');
    if (l === 'inf' || l === 'infinity') { return Infinity; }
    if (l === '-inf' || l === '-infinity') { return -Infinity; }
    if (/nan$/.test(l)) { return NaN; }
    return parseFloat(t);
  }
  try {
    if (s.indexOf('/') >= 0) {
      var i = s.indexOf('/'), a = one(s.slice(0, i)), b = one(s.slice(i + 1));
      if (b === 0) { throw new Error('bad'); }
      return a / b;
    }
    return one(s);
  } catch (err) {
    throw new Error('text must be a number such as 0.1, 1e-8, -inf or 1/3, got ' + pyStr(text));
  }
}
function pyStr(t) { return t.indexOf("'") >= 0 && t.indexOf('"') < 0 ? '"' + t + '"' : "'" + t.replace(/'/g, "\\'") + "'"; }
var COLOURS = __COLOURS__;
function mount(root) {
  var data = JSON.parse(root.querySelector('script.gb-data').textContent);
  var fmts = data.formats, byName = {};
  fmts.forEach(function (f) { byName[f.name] = f; });
  var select = root.querySelector('select.gb-format'), text = root.querySelector('input.gb-value');
  var message = root.querySelector('.gb-message'), box = root.querySelector('.gb-bits');
  var explanation = root.querySelector('.gb-explanation'), table = root.querySelector('.gb-table');
  var state = {value: 0, pattern: 0};
  function fmt() { return byName[select.value]; }
  function buttons() {
    var f = fmt(), html = [], layout = [];
    if (f.signed) { layout.push('sign'); }
    for (var i = 0; i < f.E; i++) { layout.push('exponent'); }
    for (var j = 0; j < f.M; j++) { layout.push('mantissa'); }
    layout.forEach(function (field, k) {
      html.push('<button type="button" class="gb-bit" data-bit="' + k + '" title="' + field + ' bit" ' +
        'style="--gb-colour:' + COLOURS[field] + '">0</button>');
    });
    box.innerHTML = html.join('');
    box.querySelectorAll('button').forEach(function (b) {
      b.addEventListener('click', function () {
        var f = fmt(), k = parseInt(b.getAttribute('data-bit'), 10);
        var weight = Math.pow(2, f.total - 1 - k), bit = Math.floor(state.pattern / weight) % 2;
        setPattern(state.pattern + (bit ? -weight : weight));
      });
    });
  }
  function showPattern() {
    var f = fmt();
    box.querySelectorAll('button').forEach(function (b, k) {
      var bit = Math.floor(state.pattern / Math.pow(2, f.total - 1 - k)) % 2;
      b.textContent = String(bit); b.setAttribute('aria-pressed', bit ? 'true' : 'false');
      b.classList.toggle('gb-on', bit === 1);
    });
    explanation.innerHTML = describe(state.pattern, f);
    root.setAttribute('data-gb-pattern', String(state.pattern));
  }
  function setValue(x) {
    var f = fmt(), stored = roundToFormat(x, f);
    state.value = x;
    if (Number.isNaN(stored) && !f.hasNan) { message.innerHTML = '<i>' + esc(f.name) + ' has no NaN; showing 0</i>'; stored = 0; }
    else { message.innerHTML = ''; }
    state.pattern = encodeRounded(stored, f);
    showPattern();
    table.innerHTML = rowsHtml(x, fmts);
    text.value = pyRepr(x);
  }
  function setPattern(p) {
    state.pattern = p; showPattern();
    state.value = decode(p, fmt()); message.innerHTML = '';
    table.innerHTML = rowsHtml(state.value, fmts);
    text.value = pyRepr(state.value);
  }
  select.addEventListener('change', function () { buttons(); setValue(state.value); });
  text.addEventListener('change', function () {
    try { setValue(parseValue(text.value)); }
    catch (err) { message.innerHTML = '<span style="color:#D55E00">' + esc(err.message) + '</span>'; }
  });
  buttons();
  setValue(parseValue(data.value));
}
window.gpuperfBits = {decode: decode, encode: encode, roundToFormat: roundToFormat, overflows: overflows,
  describe: describe, rowsHtml: rowsHtml, storeIn: storeIn, parseValue: parseValue, pyRepr: pyRepr, pyG: pyG,
  fieldsOf: fieldsOf, mount: mount};
})();
window.gpuperfBits.mount(document.currentScript.parentElement);
"""

_CSS = """
.gpuperf-bits{border:1px solid rgba(128,128,128,.35);border-radius:6px;padding:.6em .8em;margin:.5em 0}
.gpuperf-bits .gb-row{display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:center;margin-bottom:.4em}
.gpuperf-bits .gb-bits{display:flex;flex-wrap:wrap;gap:2px;margin:.3em 0}
.gpuperf-bits button.gb-bit{width:1.9em;padding:.15em 0;border:2px solid var(--gb-colour);border-radius:3px;
 background:transparent;color:inherit;font-family:monospace;cursor:pointer}
.gpuperf-bits button.gb-bit.gb-on{background:var(--gb-colour);color:#fff}
.gpuperf-bits .gb-explanation,.gpuperf-bits .gb-table{font-size:.9em;margin-top:.3em}
"""


def static_bit_explorer_html(fmt: str, value: float, fmts: Sequence[str]) -> str:
    """The self-contained HTML block of the static bit explorer (controls, data, the script above)."""
    names = [formats.get_format(f).name for f in fmts]
    data = {"formats": format_table(names), "value": repr(float(value))}  # repr: NaN and inf are not JSON
    options = "".join(f'<option value="{html.escape(n)}"{" selected" if n == fmt else ""}>{html.escape(n)}</option>'
                      for n in names)
    script = BITS_JS.replace("__COLOURS__", json.dumps(FIELD_COLOURS))
    payload = json.dumps(data, allow_nan=False).replace("</", "<\\/")
    return "\n".join([
        f'<div class="gpuperf-bits" id="gb-{uuid.uuid4().hex[:10]}">',
        f"<style>{_CSS}</style>",
        '<div class="gb-row"><label>format <select class="gb-format" aria-label="format">'
        f'{options}</select></label><label>value <input class="gb-value" type="text" size="22" '
        'aria-label="value"></label><span class="gb-message"></span></div>',
        '<div class="gb-bits" role="group" aria-label="bits (click to flip)"></div>',
        '<div class="gb-explanation"></div>',
        '<div class="gb-table"></div>',
        f'<script type="application/json" class="gb-data">{payload}</script>',
        f"<script>{script}</script>",
        "</div>",
    ])


class StaticBitExplorer:
    """What :func:`gpuperf.explorers.bits.bit_explorer` returns in the book build (``_repr_html_``)."""

    def __init__(self, fmt: str, value: float, fmts: Sequence[str]):
        self.fmt, self.value, self.fmts = fmt, value, tuple(fmts)
        self.html = static_bit_explorer_html(fmt, value, fmts)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"<static bit explorer: {self.fmt}, value {self.value!r}>"
