"use strict";
// One traced pass, stepped through: forward op by op, then backward contribution by contribution.
// The numbers shown are mlp-manual's (the JSON above) until an input or a weight is edited; then
// this script recomputes the pass with the same formulas, in float64.
const P = JSON.parse(document.getElementById("pass").textContent);
const $ = (id) => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";

// ---- numbers ----
const size = (shape) => shape.reduce((a, b) => a * b, 1);
const fmt = (v) => (Object.is(v, -0) ? 0 : Number(v.toPrecision(6))).toString();
function at(shape, i) {  // flat index -> "[n,j]"
  if (shape.length === 0) return "";
  const idx = [];
  for (let d = shape.length - 1; d >= 0; d--) { idx.unshift(i % shape[d]); i = Math.floor(i / shape[d]); }
  return "[" + idx.join(",") + "]";
}
function show(t, most) {  // a tensor as its shape and its first numbers
  if (!t) return "";
  most = most || 8;
  const d = t.data, n = size(t.shape);
  if (t.shape.length === 0) return fmt(d[0]);
  const shown = d.slice(0, most).map(fmt).join(", ");
  return "(" + t.shape.join(", ") + (t.shape.length === 1 ? ",)" : ")") + " [" + shown + (n > most ? ", … " + n + " values" : "") + "]";
}
const sigmoid = (z) => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

// ---- the ops: forward, and the terms of the chain rule (input entry t += local * dout[u]) ----
const ELEMENTWISE = {
  identity: [(x) => x, (x, y) => [1, () => "1"]],
  relu: [(x) => Math.max(x, 0), (x) => [x > 0 ? 1 : 0, (n) => "(" + n.x + " > 0)"]],
  tanh: [Math.tanh, (x, y) => [1 - y * y, (n) => "(1 - " + n.out + "²)"]],
  sigmoid: [sigmoid, (x, y) => [y * (1 - y), (n) => n.out + " (1 - " + n.out + ")"]],
};
function forward(op, V) {
  const ins = op.inputs.map((k) => V[k]);
  const x = ins[0];
  if (op.op === "linear") {
    const [N, D] = x.shape, H = ins[1].shape[1], W = ins[1].data, b = ins[2] ? ins[2].data : null;
    const out = new Array(N * H);
    for (let n = 0; n < N; n++) for (let j = 0; j < H; j++) {
      let s = 0;
      for (let i = 0; i < D; i++) s += x.data[n * D + i] * W[i * H + j];
      out[n * H + j] = b ? s + b[j] : s;
    }
    return { shape: [N, H], data: out };
  }
  if (op.op === "leaky_relu") return { shape: x.shape, data: x.data.map((v) => (v > 0 ? v : op.slope * v)) };
  if (ELEMENTWISE[op.op]) return { shape: x.shape, data: x.data.map(ELEMENTWISE[op.op][0]) };
  if (op.op === "add") return { shape: x.shape, data: x.data.map((v, k) => v + ins[1].data[k]) };
  if (op.op === "mul") return { shape: [], data: [x.data[0] * ins[1].data[0]] };
  if (op.op === "square") return { shape: [], data: [x.data[0] * x.data[0]] };
  const z = x.data, y = ins[1].data;
  let total = 0;
  if (op.op === "softmax_cross_entropy") {
    const [N, C] = x.shape;
    for (let n = 0; n < N; n++) {
      const row = z.slice(n * C, n * C + C), m = Math.max(...row);
      const s = row.reduce((a, v) => a + Math.exp(v - m), 0);
      total += Math.log(s) - (row[y[n]] - m);
    }
    return { shape: [], data: [total / N] };
  }
  for (let k = 0; k < z.length; k++) {
    if (op.op === "mse") total += (z[k] - y[k]) * (z[k] - y[k]);
    else total += Math.max(z[k], 0) - z[k] * y[k] + Math.log1p(Math.exp(-Math.abs(z[k])));
  }
  return { shape: [], data: [total / z.length] };
}
const LOSSES = ["softmax_cross_entropy", "mse", "bce_with_logits"];
const known = (op) => op.op === "linear" || op.op === "leaky_relu" || op.op in ELEMENTWISE ||
  ["add", "mul", "square"].includes(op.op) || LOSSES.includes(op.op);
const whole = (t) => t.data.length === size(t.shape);  // a large pass embeds only the first values
function terms(op, V, input) {  // [{t, u, local, text}] in the order the += steps run
  const ins = op.inputs.map((k) => V[k]), out = V[op.out], x = ins[0], which = op.inputs.indexOf(input);
  const name = { x: op.inputs[0], out: op.out };
  const list = [];
  const term = (t, u, local, text) => list.push({ t, u, local, text });
  if (op.op === "linear") {
    const [N, D] = x.shape, H = out.shape[1], W = ins[1].data;
    if (which === 0) for (let n = 0; n < N; n++) for (let i = 0; i < D; i++) for (let j = 0; j < H; j++)
      term(n * D + i, n * H + j, W[i * H + j], op.inputs[1] + at([D, H], i * H + j));
    if (which === 1) for (let i = 0; i < D; i++) for (let j = 0; j < H; j++) for (let n = 0; n < N; n++)
      term(i * H + j, n * H + j, x.data[n * D + i], name.x + at([N, D], n * D + i));
    if (which === 2) for (let j = 0; j < H; j++) for (let n = 0; n < N; n++) term(j, n * H + j, 1, "1");
    return list;
  }
  if (op.op === "leaky_relu" || ELEMENTWISE[op.op]) {
    for (let k = 0; k < x.data.length; k++) {
      const n = { x: name.x + at(x.shape, k), out: name.out + at(x.shape, k) };
      if (op.op === "leaky_relu") term(k, k, x.data[k] > 0 ? 1 : op.slope, "(1 if " + n.x + " > 0 else " + op.slope + ")");
      else { const [l, text] = ELEMENTWISE[op.op][1](x.data[k], out.data[k]); term(k, k, l, text(n)); }
    }
    return list;
  }
  if (op.op === "add") { for (let k = 0; k < x.data.length; k++) term(k, k, 1, "1"); return list; }
  if (op.op === "mul") { const other = op.inputs[1 - which]; term(0, 0, V[other].data[0], other); return list; }
  if (op.op === "square") { term(0, 0, 2 * x.data[0], "2 " + name.x); return list; }
  const z = x.data, y = ins[1].data;
  if (op.op === "softmax_cross_entropy") {
    const [N, C] = x.shape;
    for (let n = 0; n < N; n++) {
      const row = z.slice(n * C, n * C + C), m = Math.max(...row);
      const e = row.map((v) => Math.exp(v - m)), s = e.reduce((a, v) => a + v, 0);
      for (let k = 0; k < C; k++)
        term(n * C + k, 0, (e[k] / s - (k === y[n] ? 1 : 0)) / N, "(p[" + n + "," + k + "] - onehot[" + n + "," + k + "]) / " + N);
    }
    return list;
  }
  for (let k = 0; k < z.length; k++) {
    const n = at(x.shape, k);
    if (op.op === "mse") term(k, 0, (2 * (z[k] - y[k])) / z.length, "2 (z" + n + " - y" + n + ") / " + z.length);
    else term(k, 0, (sigmoid(z[k]) - y[k]) / z.length, "(sigmoid(z" + n + ") - y" + n + ") / " + z.length);
  }
  return list;
}
const differentiated = (op) => op.inputs.filter((k) => k in op.backward);

// ---- the pass: mlp-manual's numbers, or recomputed after edits ----
const ORIGINAL = { values: P.values, grads: P.grads, contrib: P.ops.map((op) => op.contrib) };
let edits = {};  // key -> {flat index: value}
let state = ORIGINAL;
function recompute() {
  if (Object.keys(edits).length === 0) { state = ORIGINAL; return; }
  const V = {};
  for (const [k, t] of Object.entries(P.values)) V[k] = { shape: t.shape, data: t.data.slice() };
  for (const [k, entries] of Object.entries(edits)) for (const [i, v] of Object.entries(entries)) V[k].data[+i] = v;
  for (const op of P.ops) V[op.out] = forward(op, V);
  const G = { [P.loss]: { shape: [], data: [1] } }, C = P.ops.map(() => ({}));
  for (let o = P.ops.length - 1; o >= 0; o--) {
    const op = P.ops[o], dout = G[op.out].data;
    for (const input of differentiated(op)) {
      const c = new Array(size(V[input].shape)).fill(0);
      for (const t of terms(op, V, input)) c[t.t] += t.local * dout[t.u];
      C[o][input] = { shape: V[input].shape, data: c };
      if (G[input]) G[input] = { shape: V[input].shape, data: G[input].data.map((v, k) => v + c[k]) };
      else G[input] = { shape: V[input].shape, data: c.slice() };
    }
  }
  state = { values: V, grads: G, contrib: C };
}

// ---- the steps ----
const STEPS = [{ kind: "start" }];
P.ops.forEach((op, o) => STEPS.push({ kind: "forward", o }));
STEPS.push({ kind: "seed" });
const uses = {};  // key -> how many ops send a gradient back to it
P.ops.forEach((op) => differentiated(op).forEach((k) => { uses[k] = (uses[k] || 0) + 1; }));
const seen = {};
const complete = { [P.loss]: STEPS.length - 1 };  // key -> the step after which its gradient is whole
for (let o = P.ops.length - 1; o >= 0; o--) {
  const op = P.ops[o];
  for (const input of differentiated(op)) {
    seen[input] = (seen[input] || 0) + 1;
    const base = { kind: "backward", o, input, use: seen[input] };
    if (P.scalar) terms(op, P.values, input).forEach((t, j) => STEPS.push({ ...base, kind: "term", j }));
    else STEPS.push(base);
    if (seen[input] === uses[input]) complete[input] = STEPS.length - 1;
  }
}
const forwardStep = {};  // op output -> the step that computes it
P.ops.forEach((op, o) => { forwardStep[op.out] = o + 1; });
let step = 0;

// ---- the graph ----
const PX = 80, NODE_W = 180, NODE_H = 58;
const nodeAt = {};
let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
for (const n of P.nodes) {
  nodeAt[n.key] = n;
  minX = Math.min(minX, n.x); maxX = Math.max(maxX, n.x); minY = Math.min(minY, -n.y); maxY = Math.max(maxY, -n.y);
}
for (const e of P.edges) if (e.bend !== null) maxX = Math.max(maxX, e.bend);
const px = (x) => (x - minX) * PX * 1.15 + NODE_W / 2 + 10, py = (y) => (-y - minY) * PX + NODE_H / 2 + 10;
function el(tag, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function drawGraph() {
  const svg = $("graph");
  const w = (maxX - minX) * PX * 1.15 + NODE_W + 20, h = (maxY - minY) * PX + NODE_H + 20;
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  const edges = el("g", {}, svg), nodes = el("g", {}, svg);
  for (const e of P.edges) {
    const a = nodeAt[e.source], b = nodeAt[e.target], shift = -7;  // the pair runs side by side
    let d;
    if (e.bend !== null) {
      const bx = px(e.bend) + (e.direction === "backward" ? 10 : 0);
      d = "M" + (px(a.x) + NODE_W / 2) + " " + py(a.y) + " H" + bx + " V" + py(b.y) + " H" + (px(b.x) + NODE_W / 2);
    } else {
      const dx = px(b.x) - px(a.x), dy = py(b.y) - py(a.y), len = Math.hypot(dx, dy) || 1;
      const ox = (-dy / len) * shift, oy = (dx / len) * shift;
      d = "M" + (px(a.x) + ox) + " " + (py(a.y) + oy) + " L" + (px(b.x) + ox) + " " + (py(b.y) + oy);
    }
    el("path", { d, class: "edge " + e.direction, "data-source": e.source, "data-target": e.target }, edges);
  }
  for (const n of P.nodes) {
    const g = el("g", { class: "node " + n.kind, "data-key": n.key, transform: "translate(" + (px(n.x) - NODE_W / 2) + "," + (py(n.y) - NODE_H / 2) + ")" }, nodes);
    el("rect", { width: NODE_W, height: NODE_H, rx: 6 }, g);
    el("text", { x: 6, y: 15 }, g, n.label.length > 22 ? n.label.slice(0, 21) + "…" : n.label);
    el("text", { x: 6, y: 31, class: "nums" }, g);
    el("text", { x: 6, y: 47, class: "grad" }, g);
  }
}
function short(t) {
  if (!t) return "";
  const head = t.data.slice(0, 2).map((v) => Number(v.toPrecision(3)).toString()).join(" ");
  return (t.shape.length ? "(" + t.shape.join(",") + ") " : "") + head + (size(t.shape) > 2 ? " …" : "");
}
function drawState() {
  for (const g of document.querySelectorAll("#graph .node")) {
    const key = g.dataset.key, texts = g.querySelectorAll("text");
    texts[1].textContent = !(key in forwardStep) || step >= forwardStep[key] ? short(state.values[key]) : "";
    const whole = key in complete && step >= complete[key];
    texts[2].textContent = whole ? "grad " + short(state.grads[key]) : "";
    g.classList.toggle("done-grad", whole);
    g.classList.remove("current");
  }
  for (const p of document.querySelectorAll("#graph .edge")) p.classList.remove("current");
  const s = STEPS[step];
  const mark = (source, target, direction) => {
    for (const p of document.querySelectorAll("#graph .edge." + direction))
      if (p.dataset.source === source && p.dataset.target === target) p.classList.add("current");
  };
  const current = (key) => { for (const g of document.querySelectorAll("#graph .node")) if (g.dataset.key === key) g.classList.add("current"); };
  if (s.kind === "forward") { const op = P.ops[s.o]; op.inputs.forEach((k) => mark(k, op.out, "forward")); current(op.out); }
  if (s.kind === "seed") current(P.loss);
  if (s.kind === "backward" || s.kind === "term") { const op = P.ops[s.o]; mark(op.out, s.input, "backward"); current(s.input); }
}

// ---- the panel ----
function panel(title, formula, rows, backward) {
  const box = $("panel");
  box.className = backward ? "backward" : "";
  box.replaceChildren();
  const h = document.createElement("h2"); h.textContent = title; box.appendChild(h);
  if (formula) { const f = document.createElement("div"); f.className = "formula"; f.textContent = formula; box.appendChild(f); }
  const dl = document.createElement("dl");
  for (const [name, value, attrs] of rows) {
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = name; dd.textContent = value;
    for (const [k, v] of Object.entries(attrs || {})) dd.setAttribute(k, v);
    dl.append(dt, dd);
  }
  box.appendChild(dl);
}
function localText(op, input) {
  if (!known(op) || !op.inputs.every((k) => whole(state.values[k]))) return "(see the formula)";
  const ts = terms(op, state.values, input);
  if (op.op === "linear") return input === op.inputs[0] ? "W: " + show(state.values[op.inputs[1]]) : input === op.inputs[1] ? op.inputs[0] + ": " + show(state.values[op.inputs[0]]) : "1 for every row";
  if (op.op === "add") return "1";
  const local = { shape: state.values[input].shape, data: new Array(size(state.values[input].shape)).fill(0) };
  ts.forEach((t) => { local.data[t.t] = t.local; });
  return (ts.length ? ts[0].text.replace(/\[[0-9,]+\]/g, "") + " = " : "") + show(local);
}
function drawPanel() {
  const s = STEPS[step];
  if (s.kind === "start") return panel("Ready", "Press Step (or →) to run the forward pass op by op, then the backward pass.", [["inputs", show(state.values[P.ops[0].inputs[0]])]]);
  if (s.kind === "seed") return panel("Backward starts: the seed", "dL/dL = 1", [["dL/dL", "1", { "data-grad": P.loss }]], true);
  const op = P.ops[s.o];
  if (s.kind === "forward") {
    const rows = op.inputs.map((k) => [k, show(state.values[k])]);
    rows.push([op.out + " =", show(state.values[op.out]), { "data-value": JSON.stringify(state.values[op.out].data) }]);
    return panel("Forward: " + op.out + " (" + op.op + ")", op.formula, rows, false);
  }
  const upstream = state.grads[op.out], contrib = state.contrib[s.o][s.input];
  if (s.kind === "term") {
    const ts = terms(op, state.values, s.input), t = ts[s.j];
    let total = 0;
    for (const u of ts.slice(0, s.j + 1)) if (u.t === t.t) total += u.local * upstream.data[u.u];
    const before = earlierUses(s, t.t);
    const target = s.input + ".grad" + at(state.values[s.input].shape, t.t);
    const line = target + " += " + t.text + " * " + op.out + ".grad" + at(upstream.shape, t.u);
    return panel("Chain rule, one += (" + (s.j + 1) + " of " + ts.length + " into " + s.input + ")", line, [
      ["local gradient", t.text + " = " + fmt(t.local)],
      ["upstream gradient", op.out + ".grad" + at(upstream.shape, t.u) + " = " + fmt(upstream.data[t.u])],
      ["product", fmt(t.local) + " * " + fmt(upstream.data[t.u]) + " = " + fmt(t.local * upstream.data[t.u])],
      ["running total", target + " = " + fmt(before + total), { "data-running": String(before + total) }],
    ], true);
  }
  const rows = [
    ["local gradient", localText(op, s.input)],
    ["upstream gradient", "d" + op.out + " = " + show(upstream)],
    ["product", show(contrib), { "data-value": JSON.stringify(contrib.data) }],
  ];
  if (uses[s.input] > 1) {
    const parts = contributions(s.input).slice(0, s.use);
    const sum = parts.reduce((a, c) => a.map((v, k) => v + c.data[k]), new Array(parts[0].data.length).fill(0));
    rows.push([s.use === uses[s.input] ? "sum of the " + uses[s.input] + " contributions" : "contribution " + s.use + " of " + uses[s.input] + ", sum so far",
      parts.map((c) => show(c, 4)).join(" + ") + " = " + show({ shape: contrib.shape, data: sum })]);
  }
  return panel("Backward: " + op.out + " (" + op.op + ") to " + s.input, op.backward[s.input], rows, true);
}
function contributions(key) {  // in the order the backward pass sends them
  const list = [];
  for (let o = P.ops.length - 1; o >= 0; o--) if (key in state.contrib[o]) list.push(state.contrib[o][key]);
  return list;
}
function earlierUses(s, t) {  // what earlier ops already added to this entry
  return contributions(s.input).slice(0, s.use - 1).reduce((a, c) => a + c.data[t], 0);
}

// ---- the table, the loss and what the edits moved ----
function drawTable() {
  const body = $("grads").tBodies[0];
  body.replaceChildren();
  const keys = Object.keys(complete).filter((k) => step >= complete[k]).sort((a, b) => complete[a] - complete[b]);
  for (const key of keys) {
    const tr = document.createElement("tr"), g = state.grads[key], g0 = ORIGINAL.grads[key];
    tr.dataset.key = key;
    tr.dataset.values = JSON.stringify(g.data);
    const moved = g.data.map((v, k) => v - g0.data[k]);
    for (const text of ["dL/d" + (key === P.loss ? "L" : key), show(g), state === ORIGINAL ? "" : "Δ " + show({ shape: g.shape, data: moved })]) {
      const td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  const loss = state.values[P.loss].data[0], loss0 = ORIGINAL.values[P.loss].data[0];
  $("loss").textContent = fmt(loss);
  $("loss").dataset.value = String(loss);
  $("loss-moved").textContent = state === ORIGINAL ? "" : "(was " + fmt(loss0) + ", moved by " + fmt(loss - loss0) + ")";
  $("counter").textContent = "step " + step + " of " + (STEPS.length - 1) + (step <= P.ops.length ? " · forward" : " · backward");
  $("reset").disabled = state === ORIGINAL;
  $("back").disabled = step === 0;
  $("step").disabled = step === STEPS.length - 1;
}

// ---- edits ----
function drawEdits() {
  const box = $("edits");
  if (!P.editable.length) { $("edit-box").hidden = true; $("reset").hidden = true; return; }
  for (const key of P.editable) {
    const t = P.values[key], label = document.createElement("label");
    label.textContent = key + " (" + t.shape.join(", ") + ")";
    box.appendChild(label);
    t.data.forEach((v, i) => {
      const input = document.createElement("input");
      Object.assign(input, { type: "number", step: "any", value: String(v), title: key + at(t.shape, i) });
      input.dataset.key = key; input.dataset.index = i;
      input.addEventListener("input", () => {
        const x = Number(input.value);
        if (input.value.trim() === "" || !Number.isFinite(x)) return;
        edits[key] = edits[key] || {};
        if (x === P.values[key].data[i]) delete edits[key][i]; else edits[key][i] = x;
        if (!Object.keys(edits[key]).length) delete edits[key];
        update();
      });
      box.appendChild(input);
    });
  }
}
function syncInputs() {
  for (const input of document.querySelectorAll("#edits input")) {
    const e = edits[input.dataset.key], v = e && input.dataset.index in e ? e[input.dataset.index] : P.values[input.dataset.key].data[+input.dataset.index];
    if (Number(input.value) !== v) input.value = String(v);
    input.classList.toggle("edited", !!(e && input.dataset.index in e));
  }
}

// ---- the URL keeps the step and the edits ----
function saveHash() {
  const h = "#step=" + step + (Object.keys(edits).length ? "&edits=" + encodeURIComponent(JSON.stringify(edits)) : "");
  if (location.hash === h) return;
  try { history.replaceState(null, "", h); } catch (err) { /* a sandboxed frame (a notebook's) keeps its URL; the page steps all the same */ }
}
function loadHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  const s = parseInt(params.get("step") || "0", 10);
  step = Number.isFinite(s) ? Math.min(Math.max(s, 0), STEPS.length - 1) : 0;
  edits = {};
  try {
    const e = JSON.parse(params.get("edits") || "{}");
    for (const [k, entries] of Object.entries(e)) {
      if (!P.editable.includes(k)) continue;
      for (const [i, v] of Object.entries(entries))
        if (Number.isInteger(+i) && +i >= 0 && +i < P.values[k].data.length && Number.isFinite(v)) (edits[k] = edits[k] || {})[i] = v;
    }
  } catch (err) { edits = {}; }
}
function update() {
  recompute();
  drawState(); drawPanel(); drawTable(); syncInputs(); saveHash();
}
function go(delta) { step = Math.min(Math.max(step + delta, 0), STEPS.length - 1); update(); }

drawGraph();
drawEdits();
loadHash();
update();
$("step").addEventListener("click", () => go(1));
$("back").addEventListener("click", () => go(-1));
$("reset").addEventListener("click", () => { edits = {}; update(); });
document.addEventListener("keydown", (ev) => {
  if (ev.target.tagName === "INPUT") return;
  if (ev.key === "ArrowRight") { go(1); ev.preventDefault(); }
  if (ev.key === "ArrowLeft") { go(-1); ev.preventDefault(); }
});
window.addEventListener("hashchange", () => { loadHash(); update(); });
