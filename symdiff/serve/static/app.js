// The classroom page of `symdiff serve`. Every result comes from the server (symdiff computes
// it); this script only asks, and shows. Text from the server is shown as text; only MathML and
// SVG that symdiff made are inserted as markup.
"use strict";

const RULES = [
  ["power", "power rule"], ["product", "product rule"], ["quotient", "quotient rule"],
  ["chain", "chain rule"], ["exp-log", "exponentials and logarithms"],
  ["trig", "trigonometric and inverse trigonometric"], ["combination", "several together"],
];

const $ = (id) => document.getElementById(id);
// A random name for this open page: the server shares its workers fairly between pages.
const CLIENT = Array.from(crypto.getRandomValues(new Uint8Array(12)),
  (byte) => byte.toString(16).padStart(2, "0")).join("");
const state = { expr: null, wrt: null, reveals: [], shown: 0, variables: [], previewed: null };

function element(tag, attributes = {}, text = null) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== null) node.textContent = text;
  return node;
}

function markup(tag, html, attributes = {}) {  // MathML or SVG made by symdiff
  const node = element(tag, attributes);
  node.innerHTML = html;
  return node;
}

async function ask(task, body) {
  let response;
  try {
    response = await fetch(`/api/${task}`, {
      method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-Classroom-Client": CLIENT },
    });
  } catch (error) {
    return { ok: false, error: "the server does not answer; is symdiff serve still running?" };
  }
  try {
    return await response.json();
  } catch (error) {
    return { ok: false, error: `the server answered ${response.status}` };
  }
}

function busy(target, text) {
  target.replaceChildren(element("p", { class: "busy" }, text));
}

function problem(target, answer) {
  target.replaceChildren(element("p", { class: "error" }, answer.error));
}

// -- the expression ------------------------------------------------------------------------
let previewTimer = null;
let previewAsked = 0;

async function preview() {
  const text = $("expr").value;
  if (!text.trim()) { $("preview").replaceChildren(); return null; }
  const asked = ++previewAsked;
  const answer = await ask("preview", { expr: text });
  if (asked !== previewAsked) return null;  // a newer preview is on its way
  if (!answer.ok) {
    $("preview").replaceChildren(element("p", { class: "error" }, answer.error));
    return null;
  }
  const shown = element("div", {}, null);
  shown.append(element("span", { class: "muted" }, "Understood: "));
  shown.append(markup("span", answer.html));
  shown.append(element("span", { class: "muted" },
    `Variables: ${answer.variables.join(", ") || "none"}.`));
  $("preview").replaceChildren(shown);
  setVariables(answer.variables, answer.point);
  state.previewed = text;
  return answer;
}

function setVariables(variables, point) {
  const select = $("wrt");
  const before = select.value;
  if (variables.join() !== state.variables.join()) {
    select.replaceChildren(...variables.map((name) => element("option", { value: name }, name)));
    if (variables.includes(before)) select.value = before;
    const fieldset = $("point");
    const legend = element("legend", {}, "Point");
    const pairs = variables.map((name) => {
      const pair = element("span", { class: "pair" });
      pair.append(element("label", { for: `at-${name}` }, `${name} =`));
      pair.append(element("input", { id: `at-${name}`, type: "number", step: "any",
        inputmode: "decimal", value: String(point[name] ?? 1) }));
      return pair;
    });
    fieldset.replaceChildren(legend, ...pairs);
    state.variables = variables.slice();
  }
}

function sequence() {
  const typed = $("sequence").value.split(/[\s,]+/).filter((name) => name);
  if (typed.length) return typed;
  const order = Math.min(5, Math.max(1, parseInt($("order").value, 10) || 1));
  return Array(order).fill($("wrt").value);
}

function point() {
  const values = {};
  for (const name of state.variables) {
    const value = parseFloat($(`at-${name}`).value);
    values[name] = Number.isFinite(value) ? value : 1;
  }
  return values;
}

async function differentiate(event) {
  if (event) event.preventDefault();
  $("problem").textContent = "";
  if (state.previewed !== $("expr").value && !(await preview())) {
    $("problem").textContent = "Write an expression symdiff can read first.";
    return;
  }
  const body = { expr: $("expr").value, wrt: sequence() };
  busy($("steps"), "Deriving…");
  const answer = await ask("derive", body);
  if (!answer.ok) {
    $("steps").replaceChildren();
    $("problem").textContent = answer.error;
    return;
  }
  state.expr = body.expr;
  state.wrt = body.wrt;
  showSteps(answer);
  $("verdict").replaceChildren();
  drawPlot();
  drawGraph();
  showCode();
}

// -- steps, one at a time ------------------------------------------------------------------
function showSteps(answer) {
  const holder = $("steps");
  holder.replaceChildren();
  state.reveals = [];
  answer.orders.forEach((order, k) => {
    const title = element("h3", { class: "order-title" });
    title.append(markup("span", order.title), " of ", markup("span", order.of));
    holder.append(title);
    const list = element("ol", { class: "walk" });
    order.reveals.forEach((reveal) => {
      const item = element("li", { class: reveal.kind });
      item.style.marginLeft = `${1.5 * reveal.depth}em`;
      item.append(element("span", { class: "kind" }, reveal.kind === "hint" ? "Hint" : "Step"));
      item.append(markup("span", reveal.html));
      if (reveal.checkable) item.append(stepCheck(k, reveal.line));
      item.hidden = true;
      list.append(item);
      state.reveals.push(item);
    });
    holder.append(list);
  });
  const final = element("div", { class: "answer", id: "final" });
  final.append(element("h3", {}, "Answer"), markup("div", answer.answer.html));
  final.append(element("p", { class: "muted" }, `As text: ${answer.answer.text}`));
  final.hidden = true;
  holder.append(final);
  state.reveals.push(final);
  state.shown = 0;
  $("next").disabled = false;
  $("all").disabled = false;
  updateNext();
}

function stepCheck(order, line) {
  const form = element("form", { class: "stepcheck" });
  const id = `try-${order}-${line}`;
  form.append(element("label", { for: id }, "My result for this step"));
  const input = element("input", { id, type: "text", spellcheck: "false", maxlength: "2000" });
  form.append(input, element("button", { type: "submit", class: "small" }, "Check this line"));
  const result = element("div", { role: "status" });
  form.append(result);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!input.value.trim()) return;
    busy(result, "Checking…");
    const answer = await ask("check", { expr: state.expr, wrt: state.wrt, answer: input.value,
                                        order, line });
    showVerdict(result, answer);
  });
  return form;
}

function updateNext() {
  const next = state.reveals[state.shown];
  const button = $("next");
  if (!next) {
    button.textContent = "Every step is shown";
    button.disabled = true;
    $("all").disabled = true;
  } else {
    button.textContent = next.id === "final" ? "Show the answer" :
      next.classList.contains("hint") ? "Show the next hint" : "Show the step";
  }
  const steps = state.reveals.length;
  $("progress").textContent = `${state.shown} of ${steps} shown`;
}

function revealNext() {
  const item = state.reveals[state.shown];
  if (!item) return;
  item.hidden = false;
  item.scrollIntoView({ block: "nearest" });
  state.shown += 1;
  updateNext();
}

function revealAll() {
  while (state.shown < state.reveals.length) revealNext();
  $("final").scrollIntoView({ block: "nearest" });
}

// -- answers -------------------------------------------------------------------------------
const LABELS = { equivalent: "Right", unsimplified: "Right, but not simplest",
  different: "Not equivalent", "probably equivalent": "Probably right" };

function showVerdict(target, answer) {
  if (!answer.ok) { problem(target, answer); return; }
  const kind = answer.verdict === "probably equivalent" ? "probably" : answer.verdict;
  const box = element("div", { class: `verdict ${kind}` });
  box.append(element("strong", {}, `${LABELS[answer.verdict]}. `));
  box.append(document.createTextNode(answer.message));
  if (answer.simpler) {
    box.append(element("br"), document.createTextNode("Simpler: "), markup("span",
      answer.simpler.html));
  }
  target.replaceChildren(box);
}

async function checkAnswer(event) {
  event.preventDefault();
  if (!state.expr) { $("verdict").textContent = "Differentiate an expression first."; return; }
  busy($("verdict"), "Checking…");
  const answer = await ask("check", { expr: state.expr, wrt: state.wrt,
                                      answer: $("answer").value });
  showVerdict($("verdict"), answer);
}

// -- plot, graph, code ---------------------------------------------------------------------
async function drawPlot(event) {
  if (event) event.preventDefault();
  if (!state.expr) return;
  const interval = [parseFloat($("from").value), parseFloat($("to").value)];
  busy($("plot"), "Drawing…");
  const answer = await ask("plot", { expr: state.expr, wrt: state.wrt, point: point(),
                                     interval });
  if (!answer.ok) { problem($("plot"), answer); return; }
  $("plot").replaceChildren(markup("div", answer.svg));
}

async function drawGraph(event) {
  if (event) event.preventDefault();
  if (!state.expr) return;
  busy($("graph"), "Drawing…");
  const answer = await ask("graph", { expr: state.expr, point: point() });
  if (!answer.ok) { problem($("graph"), answer); $("gradient").textContent = ""; return; }
  $("graph").replaceChildren(markup("div", answer.svg));
  const d = state.variables.length > 1 ? "∂" : "d";
  const parts = Object.entries(answer.gradient).map(([name, value]) =>
    `${d}f/${d}${name} = ${Number(value).toPrecision(6)}`);
  $("gradient").textContent = `At ${answer.point}: ${parts.join(", ")}.`;
  if (event) drawPlot();
}

async function showCode() {
  const answer = await ask("code", { expr: state.expr, wrt: state.wrt });
  $("code").textContent = answer.ok ? answer.source : answer.error;
}

// -- practice ------------------------------------------------------------------------------
function practiceRequest() {
  const rules = RULES.map(([key]) => key).filter((key) => $(`rule-${key}`).checked);
  return { seed: $("seed").value.trim() || "1", rules: rules.length ? rules : ["power"],
           difficulty: parseInt($("difficulty").value, 10),
           count: Math.min(30, Math.max(1, parseInt($("count").value, 10) || 8)) };
}

function updateWorksheetLinks() {
  const request = practiceRequest();
  const query = new URLSearchParams({ seed: request.seed, rules: request.rules.join(","),
    difficulty: request.difficulty, count: request.count });
  $("worksheet").href = `/worksheet?${query}`;
  query.set("answers", "1");
  $("worksheet-answers").href = `/worksheet?${query}`;
}

async function makeExercises(event) {
  event.preventDefault();
  updateWorksheetLinks();
  const list = $("exercises");
  busy(list, "Making exercises…");
  const answer = await ask("practice", practiceRequest());
  if (!answer.ok) { problem(list, answer); return; }
  list.replaceChildren(...answer.exercises.map((exercise) => {
    const item = element("li", { "data-text": exercise.text });
    item.append(markup("span", exercise.html), " ");
    item.append(element("span", { class: "muted" }, `(${exercise.rule})`));
    const button = element("button", { type: "button", class: "small" }, "Try this one");
    button.addEventListener("click", () => tryExercise(exercise.text));
    item.append(button);
    return item;
  }));
}

async function tryExercise(text) {
  $("expr").value = text;
  $("sequence").value = "";
  $("order").value = "1";
  await preview();
  $("wrt").value = "x";
  await differentiate();
  $("next").focus();
}

// -- wiring --------------------------------------------------------------------------------
function start() {
  $("rules").replaceChildren(...RULES.map(([key, name]) => {
    const label = element("label", { for: `rule-${key}` });
    const box = element("input", { type: "checkbox", id: `rule-${key}`, value: key });
    box.checked = true;
    box.addEventListener("change", updateWorksheetLinks);
    label.append(box, ` ${name}`);
    return label;
  }));
  for (const id of ["seed", "difficulty", "count"]) {
    $(id).addEventListener("change", updateWorksheetLinks);
  }
  updateWorksheetLinks();
  $("expr").addEventListener("input", () => {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(preview, 250);
  });
  $("expr-form").addEventListener("submit", differentiate);
  $("next").addEventListener("click", revealNext);
  $("all").addEventListener("click", revealAll);
  $("check-form").addEventListener("submit", checkAnswer);
  $("plot-form").addEventListener("submit", drawPlot);
  $("graph-form").addEventListener("submit", drawGraph);
  $("practice-form").addEventListener("submit", makeExercises);
}

document.addEventListener("DOMContentLoaded", start);
