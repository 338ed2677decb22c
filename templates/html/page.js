
"use strict";
const UI = __UI__;
function gcd(a, b) { while (b) { [a, b] = [b, a % b]; } return a; }
function parse(text, rational) {
  text = String(text).trim().replace(/[_,\s]/g, "");
  let m = /^\+?(\d+)$/.exec(text);
  if (m) { const n = BigInt(m[1]); return n > 0n ? [n, 1n] : null; }
  if (!rational) return null;
  m = /^\+?(\d+)\/(\d+)$/.exec(text);
  let n, d;
  if (m) { n = BigInt(m[1]); d = BigInt(m[2]); }
  else {
    m = /^\+?(\d*)\.(\d+)$/.exec(text);
    if (!m) return null;
    n = BigInt((m[1] || "0") + m[2]); d = 10n ** BigInt(m[2].length);
  }
  if (n <= 0n || d <= 0n) return null;
  const g = gcd(n, d);
  return [n / g, d / g];
}
function show([n, d]) { return d === 1n ? n.toString() : n + "/" + d; }
function group(n) { return n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
function exact(f, v) { const [n, d] = f(v); return n % d === 0n ? n / d : null; }
function roundRational(n, d, digits) {
  const scale = 10n ** BigInt(digits);
  const k = (2n * n * scale + d) / (2n * d);
  return [k / scale, k % scale];
}
function percent(part, whole) {
  const n = part * 100n, d = whole;
  let digits = 2;
  const zero = (p) => { const [w, f] = roundRational(n, d, p); return w === 0n && f === 0n; };
  if (n !== 0n && zero(digits)) { while (digits < 8 && zero(digits)) digits++; digits++; }
  const [w, f] = roundRational(n, d, digits);
  return w + "." + f.toString().padStart(digits, "0") + "%";
}
function fill(message, values, extra) {
  return message.replace(/\{(\w+)\}/g, (all, key) =>
    key in extra ? extra[key] : key in values ? show(values[key]) : all);
}
function read() {
  const v = {}, raw = {};
  let ok = true;
  for (const s of SYMBOLS) {
    const input = document.getElementById("in-" + s.name);
    const q = parse(input.value, s.rational);
    input.classList.toggle("bad", q === null);
    document.getElementById("err-" + s.name).textContent =
      q === null ? (s.rational ? UI.invalid_ratio : UI.invalid) : "";
    if (q === null) { ok = false; continue; }
    raw[s.name] = q;
    if (s.rational) { v["n_" + s.name] = q[0]; v["d_" + s.name] = q[1]; }
    else v["x_" + s.name] = q[0];
  }
  return ok ? [v, raw] : [null, raw];
}
function setOut(id, text) {
  const el = document.getElementById(id);
  if (el) el.textContent = text;
  for (const copy of document.querySelectorAll('[data-copy="' + id + '"]')) copy.textContent = text;
}
function update() {
  const [v, raw] = read();
  const warnings = [];
  if (v) {
    for (const c of CONSTRAINTS) {
      const [n, d] = c.f(v);
      if (!(n > 0n && n % d === 0n)) {
        const value = n % d === 0n ? (n / d).toString() : show([n / gcd(n, d), d / gcd(n, d)]);
        warnings.push(fill(c.message, raw, {value: value}));
      }
    }
  }
  const total = v ? exact(TOTAL, v) : null;
  const trainable = v ? exact(TRAINABLE, v) : null;
  setOut("total", total === null ? "—" : group(total));
  setOut("trainable", trainable === null ? "—" : group(trainable));
  setOut("trainable-share", total && trainable !== null ? percent(trainable, total) : "");
  if (ACTIVE) {  // a mixture of experts: what one token uses
    const active = v ? exact(ACTIVE, v) : null;
    setOut("active", active === null ? "—" : group(active));
    setOut("active-share", total && active !== null ? percent(active, total) : "");
  }
  if (v && total === null) warnings.push(UI.not_whole);
  for (const item of ITEMS) {
    if (item.about) {  // a number per token: shown rounded, "about …", where it is not whole
      const [n, d] = v ? item.f(v) : [0n, 0n];
      setOut(item.id, !v || d === 0n ? "—" : n % d === 0n ? group(n / d)
             : UI.about.replace("[[n]]", group((2n * n + d) / (2n * d))));
      continue;
    }
    const value = v ? exact(item.f, v) : null;
    setOut(item.id, value === null ? "—" : group(value));
    if (!item.share) continue;
    setOut(item.id + "-share", value !== null && total ? percent(value, total) : "");
    for (const bar of document.querySelectorAll('[data-bar="' + item.id + '"]')) {
      // the chart's bar: its width the share, in hundredths of a percent (exact, then a float for the style)
      bar.style.width = value !== null && total ? Number(value * 10000n / total) / 100 + "%" : "0";
    }
  }
  for (const el of document.querySelectorAll("[data-sym]")) {  // the numbers put into the formulas
    const q = raw[el.dataset.sym];
    el.textContent = !q ? "—" : q[1] === 1n ? group(q[0]) : show(q);
  }
  if (!v || warnings.length) warnings.push(UI.stale);
  document.getElementById("warnings").textContent = warnings.join(" · ");
  // while a value is missing or breaks a constraint, the numbers still shown are greyed out
  document.documentElement.classList.toggle("stale", !v || warnings.length > 0);
  document.documentElement.dataset.total = total === null ? "" : total.toString();
}
function fromSlider(s, input, slider) {
  const k = BigInt(slider.value);
  input.value = s.rational ? show([k / gcd(k, BigInt(s.den)), BigInt(s.den) / gcd(k, BigInt(s.den))]) : slider.value;
}
function toSlider(s, input, slider) {
  const q = parse(input.value, s.rational);
  if (!q) return;
  const scaled = q[0] * BigInt(s.den);
  if (scaled % q[1] === 0n) {
    const k = scaled / q[1];
    if (k > BigInt(slider.max)) slider.max = k.toString();
    slider.value = k.toString();
  }
}
function fromHash() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  for (const s of SYMBOLS) {
    if (params.has(s.name)) {
      const input = document.getElementById("in-" + s.name);
      input.value = params.get(s.name);
      toSlider(s, input, document.getElementById("slide-" + s.name));
    }
  }
}
for (const s of SYMBOLS) {
  const input = document.getElementById("in-" + s.name), slider = document.getElementById("slide-" + s.name);
  input.addEventListener("input", () => { toSlider(s, input, slider); update(); });
  slider.addEventListener("input", () => { fromSlider(s, input, slider); update(); });
}
document.getElementById("reset").addEventListener("click", () => {
  for (const s of SYMBOLS) {
    const input = document.getElementById("in-" + s.name);
    input.value = s.init;
    toSlider(s, input, document.getElementById("slide-" + s.name));
  }
  update();
});
window.addEventListener("hashchange", () => { fromHash(); update(); });
fromHash();
update();
document.documentElement.dataset.ready = "1";
