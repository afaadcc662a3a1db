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

// ---- grids: a matrix as a small table, a batch's tensor as its preview rows ----
const GRID = P.grid || 8;  // rows and columns shown of a larger matrix
const ROWS = P.rows || [];  // the batch's preview rows, chosen as the text walk-through chooses them
const BATCH = new Set(P.batch || []);  // the tensors with one row per row of the batch
const label = (key) => (P.names && P.names[key]) || key;  // "output of layers.1" for a layer's output
const gradName = (key) => "dL/d" + (key === P.loss ? "L" : P.names && P.names[key] ? "(" + P.names[key] + ")" : key);
const short = (v) => (Object.is(v, -0) ? 0 : Number(v.toPrecision(3))).toString();
function view(t, key) {  // what a grid shows: {rows: [[label, values]], R, C} (R x C, the whole matrix)
  if (!t || t.shape.length === 0) return null;
  const batch = BATCH.has(key), vector = t.shape.length === 1;
  const R = vector ? (batch ? t.shape[0] : 1) : t.shape[0], C = vector ? (batch ? 1 : t.shape[0]) : size(t.shape.slice(1));
  const picked = batch ? ROWS.filter((r) => r < R) : [...Array(Math.min(R, GRID)).keys()];
  const cols = Math.min(C, GRID);
  const cells = whole(t) ? picked.map((r) => t.data.slice(r * C, r * C + cols)) : t.corner;
  const name = (r) => (batch ? "row " + r : vector ? "" : String(r));
  return { rows: picked.map((r, i) => [name(r), cells[i]]), R, C, batch };
}
function matrix(columns, rows, caption) {  // a small table of divs (ARIA roles): a header row, then [label, cells]
  const table = document.createElement("div");
  table.className = "grid";
  table.setAttribute("role", "table");
  const line = (role) => { const r = document.createElement("div"); r.setAttribute("role", "row"); r.className = role; table.appendChild(r); return r; };
  const cell = (row, role, text) => { const c = document.createElement("span"); c.setAttribute("role", role); c.textContent = text; row.appendChild(c); return c; };
  const labelled = rows.some(([name]) => name), head = line("head");
  if (labelled) cell(head, "columnheader", "");
  for (const name of columns) cell(head, "columnheader", name);
  const cells = rows.map(([name, values]) => {
    const row = line("body");
    if (labelled) cell(row, "rowheader", name);
    return values.map((text) => cell(row, "cell", text));
  });
  if (caption) { const c = document.createElement("div"); c.className = "caption"; c.textContent = caption; table.appendChild(c); }
  return { table, cells };
}
function grid(t, key) {  // a matrix as a small grid, a batch's as its preview rows; a scalar as its number
  const v = view(t, key);
  if (!v) { const span = document.createElement("span"); span.className = "scalar"; span.textContent = fmt(t.data[0]); return span; }
  const cols = v.rows[0] ? v.rows[0][1].length : 0;
  const parts = ["(" + t.shape.join(", ") + (t.shape.length === 1 ? ",)" : ")")];
  if (v.batch && v.rows.length < v.R) parts.push("rows " + v.rows.map(([n]) => n.slice(4)).join(", ") + " of " + v.R);
  else if (v.rows.length < v.R) parts.push("first " + v.rows.length + " of " + v.R + " rows");
  if (cols < v.C) parts.push("first " + cols + " of " + v.C + " columns");
  const names = [...Array(cols).keys()].map((j) => (v.C > 1 ? String(j) : ""));
  const { table, cells } = matrix(names, v.rows.map(([name, values]) => [name, values.map(short)]), parts.join(", "));
  cells.forEach((row, i) => row.forEach((c, j) => { c.title = fmt(v.rows[i][1][j]); }));
  Object.assign(table.dataset, { key, rows: v.rows.length, cols });
  const box = document.createElement("div");
  box.className = "grid-box";
  box.appendChild(table);
  return box;
}
function firstValues(t, key) {  // "(4, 8) row 1: -0.101 0.692 …": a node's line, as many numbers as given
  if (!t) return [];
  if (t.shape.length === 0) return [fmt(t.data[0])];
  const v = view(t, key), [name, values] = v.rows[0];
  const shown = values.map(short), more = values.length < (v.batch ? v.C : v.R * v.C);
  return ["(" + t.shape.join(",") + ")" + (name && v.batch ? " " + name + ":" : ""), ...shown, ...(more ? ["…"] : [])];
}

// ---- the graph ----
const PX = 80, NODE_H = 58, PAD = 6;
const nodeAt = {};
let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
for (const n of P.nodes) {
  nodeAt[n.key] = n;
  minX = Math.min(minX, n.x); maxX = Math.max(maxX, n.x); minY = Math.min(minY, -n.y); maxY = Math.max(maxY, -n.y);
}
for (const e of P.edges) if (e.bend !== null) maxX = Math.max(maxX, e.bend);
let NODE_W = 180, XU = PX * 1.15;  // node width and pixels per inch across: set by layout() to fit every name
const px = (x) => (x - minX) * XU + NODE_W / 2 + 10, py = (y) => (-y - minY) * PX + NODE_H / 2 + 10;
function el(tag, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function textWidth(texts, cls) {  // the widest of the texts, as the graph draws them
  const t = el("text", { class: cls }, $("graph"));
  let w = 0;
  for (const s of texts) { t.textContent = s; w = Math.max(w, t.getComputedTextLength()); }
  t.remove();
  return w;
}
function layout() {  // nodes as wide as the longest name, and columns far enough apart for them
  NODE_W = Math.max(180, Math.ceil(textWidth(P.nodes.map((n) => n.label), "name")) + 2 * PAD);
  for (const a of P.nodes) for (const b of P.nodes) {  // two nodes level with each other must not touch
    const dx = Math.abs(a.x - b.x);
    if (dx > 0 && Math.abs(a.y - b.y) * PX < NODE_H + 8) XU = Math.max(XU, (NODE_W + 24) / dx);
  }
  for (const e of P.edges) if (e.bend !== null) XU = Math.max(XU, (NODE_W / 2 + 14) / (e.bend - nodeAt[e.source].x));
}
function drawGraph() {
  layout();
  const svg = $("graph");
  const w = (maxX - minX) * XU + NODE_W + 20, h = (maxY - minY) * PX + NODE_H + 20;
  svg.setAttribute("viewBox", "0 0 " + w + " " + h);
  svg.style.setProperty("--natural-width", w + "px");
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
    el("path", { d, class: "edge " + e.direction + (e.bend !== null ? " skip" : ""), "data-source": e.source, "data-target": e.target }, edges);
  }
  for (const n of P.nodes) {
    const g = el("g", { class: "node " + n.kind, "data-key": n.key, transform: "translate(" + (px(n.x) - NODE_W / 2) + "," + (py(n.y) - NODE_H / 2) + ")" }, nodes);
    el("rect", { width: NODE_W, height: NODE_H, rx: 6 }, g);
    el("text", { x: PAD, y: 15, class: "name" }, g, n.label);
    el("text", { x: PAD, y: 31, class: "nums" }, g);
    el("text", { x: PAD, y: 47, class: "grad" }, g);
  }
  drawLegend();
}
const LEGEND = [  // [the edges it describes, class of its sample, what it means]
  [".edge.forward:not(.skip)", "edge forward", "forward: a value flows into the op that uses it"],
  [".edge.backward:not(.skip)", "edge backward", "backward: the gradient of that value flows back"],
  [".edge.skip", "edge forward skip", "skip connection: x goes around f(x) and is added back (and its gradient too)"],
  [".edge", "edge current", "the step shown now"],
];
function drawLegend() {  // one entry per style of edge the graph draws, each with a sample in that style
  const list = $("legend");
  for (const [selector, cls, text] of LEGEND) {
    if (!document.querySelector("#graph " + selector)) continue;
    const li = document.createElement("li"), sample = document.createElementNS(SVGNS, "svg");
    li.dataset.edge = cls.split(" ").pop();
    sample.setAttribute("viewBox", "0 0 40 12");
    sample.setAttribute("class", "sample");
    el("path", { d: cls.includes("skip") ? "M2 10 H14 V2 H26 V10 H38" : "M2 6 H38", class: cls }, sample);
    const span = document.createElement("span");
    span.textContent = text;
    li.append(sample, span);
    list.appendChild(li);
  }
  const li = document.createElement("li"), sample = document.createElementNS(SVGNS, "svg");
  li.dataset.node = "done-grad";
  sample.setAttribute("viewBox", "0 0 40 12");
  sample.setAttribute("class", "sample");
  el("rect", { x: 4, y: 1, width: 32, height: 10, rx: 3, class: "done" }, sample);
  const span = document.createElement("span");
  span.textContent = "red border: the node's gradient is complete";
  li.append(sample, span);
  list.appendChild(li);
}
function fit(text, words) {  // as many of the words as fit in the node, then "…"
  const room = NODE_W - 2 * PAD;
  text.textContent = "";
  for (let k = words.length; k > 0; k--) {
    text.textContent = words.slice(0, k).join(" ") + (k < words.length && words[k - 1] !== "…" ? " …" : "");
    if (text.getComputedTextLength() <= room) return;
  }
}
function drawState() {
  for (const g of document.querySelectorAll("#graph .node")) {
    const key = g.dataset.key, texts = g.querySelectorAll("text");
    const reached = !(key in forwardStep) || step >= forwardStep[key];
    fit(texts[1], reached ? firstValues(state.values[key], key) : []);
    const done = key in complete && step >= complete[key];
    fit(texts[2], done ? ["grad", ...firstValues(state.grads[key], key)] : []);
    g.classList.toggle("done-grad", done);
    g.classList.remove("current");
  }
  for (const p of document.querySelectorAll("#graph .edge")) p.classList.remove("current");
  const s = STEPS[step];
  const mark = (source, target, direction) => {
    for (const p of document.querySelectorAll("#graph .edge." + direction))
      if (p.dataset.source === source && p.dataset.target === target) p.classList.add("current");
  };
  const current = (key) => { for (const g of document.querySelectorAll("#graph .node")) if (g.dataset.key === key) g.classList.add("current"); };
  if (s.kind === "start") current(P.ops[0].inputs[0]);  // the pass starts from its input
  if (s.kind === "forward") { const op = P.ops[s.o]; op.inputs.forEach((k) => mark(k, op.out, "forward")); current(op.out); }
  if (s.kind === "seed") current(P.loss);
  if (s.kind === "backward" || s.kind === "term") { const op = P.ops[s.o]; mark(op.out, s.input, "backward"); current(s.input); }
  followCurrent();
}
function followCurrent() {  // a graph wider than its box (a narrow screen) scrolls to the current node
  const box = $("graph-scroll"), node = document.querySelector("#graph .node.current");
  if (!node || box.scrollWidth <= box.clientWidth) return;
  const r = node.getBoundingClientRect(), b = box.getBoundingClientRect();
  box.scrollLeft += r.left + r.width / 2 - (b.left + b.width / 2);
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
    dt.textContent = name;
    for (const part of [].concat(value)) dd.append(part);
    for (const [k, v] of Object.entries(attrs || {})) dd.setAttribute(k, v);
    dl.append(dt, dd);
  }
  box.appendChild(dl);
}
function localGradient(op, input) {  // the local gradient as text and grids
  if (!known(op) || !op.inputs.every((k) => whole(state.values[k]))) return "(see the formula)";
  if (op.op === "linear") {
    if (input === op.inputs[0]) return [op.inputs[1] + " = ", grid(state.values[op.inputs[1]], op.inputs[1])];
    if (input === op.inputs[1]) return ["x = " + label(op.inputs[0]) + " = ", grid(state.values[op.inputs[0]], op.inputs[0])];
    return "1 for every row";
  }
  if (op.op === "add") return "1";
  const ts = terms(op, state.values, input);
  const local = { shape: state.values[input].shape, data: new Array(size(state.values[input].shape)).fill(0) };
  ts.forEach((t) => { local.data[t.t] = t.local; });
  return [(ts.length ? ts[0].text.replace(/\[[0-9,]+\]/g, "") + " = " : ""), grid(local, input)];
}
function drawPanel() {
  const s = STEPS[step];
  if (s.kind === "start") {
    const first = P.ops[0].inputs[0];
    return panel("Ready", "Press Step (or →) to run the forward pass op by op, then the backward pass.", [[label(first), grid(state.values[first], first)]]);
  }
  if (s.kind === "seed") return panel("Backward starts: the seed", "dL/dL = 1", [["dL/dL", "1", { "data-grad": P.loss }]], true);
  const op = P.ops[s.o];
  if (s.kind === "forward") {
    const rows = op.inputs.map((k) => [label(k), grid(state.values[k], k)]);
    rows.push([label(op.out) + " =", grid(state.values[op.out], op.out), { "data-value": JSON.stringify(state.values[op.out].data) }]);
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
    ["local gradient", localGradient(op, s.input)],
    ["upstream gradient", [gradName(op.out) + " = ", grid(upstream, op.out)]],
    ["product", grid(contrib, s.input), { "data-value": JSON.stringify(contrib.data) }],
  ];
  if (uses[s.input] > 1) {
    const parts = contributions(s.input).slice(0, s.use);
    const sum = parts.reduce((a, c) => a.map((v, k) => v + c.data[k]), new Array(parts[0].data.length).fill(0));
    const shown = parts.flatMap((c, i) => [...(i ? [" + "] : []), grid(c, s.input)]);
    rows.push([s.use === uses[s.input] ? "sum of the " + uses[s.input] + " contributions" : "contribution " + s.use + " of " + uses[s.input] + ", sum so far",
      [...shown, " = ", grid({ shape: contrib.shape, data: sum }, s.input)]]);
  }
  const to = (P.names && P.names[s.input] ? "the " : "") + label(s.input);
  return panel("Backward: " + op.out + " (" + op.op + ") to " + to, op.backward[s.input], rows, true);
}
function contributions(key) {  // in the order the backward pass sends them
  const list = [];
  for (let o = P.ops.length - 1; o >= 0; o--) if (key in state.contrib[o]) list.push(state.contrib[o][key]);
  return list;
}
function earlierUses(s, t) {  // what earlier ops already added to this entry
  return contributions(s.input).slice(0, s.use - 1).reduce((a, c) => a + c.data[t], 0);
}

// ---- the Jacobian of an elementwise layer, for the first preview row ----
function drawJacobian() {
  const box = $("jacobian"), s = STEPS[step], op = s.o === undefined ? null : P.ops[s.o];
  const elementwise = op && (op.op === "leaky_relu" || (op.op in ELEMENTWISE && BATCH.has(op.out)));
  box.hidden = !elementwise;
  if (!elementwise) return;
  const x = view(state.values[op.inputs[0]], op.inputs[0]), out = view(state.values[op.out], op.out);
  const [name, xs] = x.rows[0], ys = out.rows[0][1];
  const diag = xs.map((v, j) => (op.op === "leaky_relu" ? (v > 0 ? 1 : op.slope) : ELEMENTWISE[op.op][1](v, ys[j])[0]));
  const { table, cells } = matrix(diag.map((_, k) => "x" + k),
    diag.map((d, j) => ["out" + j, diag.map((_, k) => (j === k ? short(d) : ""))]));
  table.classList.add("jacobian");
  Object.assign(table.dataset, { key: op.out, row: name.slice(4), units: diag.length });
  cells.forEach((row, j) => row.forEach((c, k) => {
    const value = j === k ? diag[j] : 0;
    c.className = (j === k ? "diagonal " : "") + (value !== 0 ? "nonzero" : "zero");
    c.title = "d out[" + j + "] / d x[" + k + "] = " + fmt(value);
  }));
  const units = diag.length < x.C ? ", its first " + diag.length + " of " + x.C + " units" : "";
  const why = "Diagonal: out[j] = " + op.op + "(x[j]) depends on x[j] alone, so d out[j] / d x[k] = 0 for k ≠ j.";
  const off = xs.flatMap((v, j) => (v <= 0 ? [j] : [])), listed = off.length ? off.join(", ") : "none on this row";
  const zeros = op.op === "relu" ? " Its zero diagonal entries are the units with x <= 0: " + listed + "."
    : op.op === "leaky_relu" ? " The units with x <= 0 get the slope " + op.slope + ": " + listed + "." : "";
  const h = document.createElement("h2"), caption = document.createElement("p");
  h.textContent = "Jacobian of " + op.out + " (" + op.op + "), " + name + units;
  caption.className = "caption";
  caption.textContent = why + zeros + (s.kind === "forward" ? "" : " Backward, dx = dout · J is then dout times the diagonal, elementwise.");
  const scroll = document.createElement("div");
  scroll.className = "grid-box";
  scroll.appendChild(table);
  box.replaceChildren(h, scroll, caption);
}

// ---- the rows shown, the table, the loss and what the edits moved ----
function drawRowsNote() {
  const note = $("rows-note"), X = P.values.X;
  if (!ROWS.length || !X) { note.hidden = true; return; }
  const N = X.shape[0], v = view(X, "X"), ns = ROWS.map(String);
  const which = ns.length === 1 ? "row " + ns[0] : "rows " + ns.slice(0, -1).join(", ") + " and " + ns[ns.length - 1];
  const xs = v.C <= GRID ? "x = " + v.rows.map(([, vals]) => "[" + vals.map(short).join(", ") + "]").join(" and ") : "";
  const skipped = [...Array(Math.max(...ROWS)).keys()].filter((r) => !ROWS.includes(r));
  const T = P.training, picked = T ? ROWS.map((r) => T.rows[r]) : [];
  const training = !T ? "" : "training " + (picked.length === 1 ? "row " + picked[0] : "rows " +
    picked.slice(0, -1).join(", ") + " and " + picked[picked.length - 1]) + " of " + T.of;
  const about = [training, xs].filter(Boolean).join("; ");
  note.textContent = "Rows shown: " + which + " of the " + N + " in the batch" + (about ? " (" + about + ")" : "") + "." +
    (skipped.length ? " " +
    (skipped.length === 1 ? "Row " + skipped[0] + " is" : "Rows " + skipped.join(", ") + " are") +
    " passed over: its input is all zeros, and with the biases at zero, as they start, it stays zero in every layer." : "");
}
function drawTable() {
  const body = $("grads").tBodies[0];
  body.replaceChildren();
  const keys = Object.keys(complete).filter((k) => step >= complete[k]).sort((a, b) => complete[a] - complete[b]);
  for (const key of keys) {
    const tr = document.createElement("tr"), g = state.grads[key], g0 = ORIGINAL.grads[key];
    tr.dataset.key = key;
    tr.dataset.values = JSON.stringify(g.data);
    const moved = { shape: g.shape, data: g.data.map((v, k) => v - g0.data[k]) };
    moved.data = moved.data.map((d, k) => (Math.abs(d) <= 1e-12 * Math.abs(g0.data[k]) ? 0 : d));  // rounding, not a move
    const name = document.createElement("td"), value = document.createElement("td");
    name.textContent = gradName(key);
    value.append(grid(g, key));
    if (state !== ORIGINAL) {
      const span = document.createElement("span");
      span.className = "moved";
      span.append("Δ ", grid(moved, key));
      value.append(" ", span);
    }
    tr.append(name, value);
    body.appendChild(tr);
  }
  const loss = state.values[P.loss].data[0], loss0 = ORIGINAL.values[P.loss].data[0];
  $("loss-line").hidden = step < forwardStep[P.loss];  // the loss is shown once the forward pass reaches it
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
  drawState(); drawPanel(); drawJacobian(); drawTable(); syncInputs(); saveHash();
}
function go(delta) { step = Math.min(Math.max(step + delta, 0), STEPS.length - 1); update(); }

drawGraph();
drawRowsNote();
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
