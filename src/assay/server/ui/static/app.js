// assay web UI: the live parts of the server-rendered pages. Plain JavaScript, no build
// step. Each page's block runs only when its form or section is on the page. Every write
// goes through the JSON API (/api/...), so validation happens in one place, the server;
// its 422 answers name field paths (scorers[0].params.expected) that we show inline.
"use strict";

// ---------------------------------------------------------------- helpers
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function show(node, message) {
  node.textContent = message || "";
  node.hidden = !message;
}

// The CSRF cookie the server sets on every page; writes echo it in a header.
function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)assay_csrf=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : null;
}

async function api(method, url, body) {
  const init = { method, headers: { Accept: "application/json" } };
  const csrf = csrfToken();
  if (method !== "GET" && csrf) init.headers["X-CSRF-Token"] = csrf;
  if (body instanceof FormData) init.body = body;
  else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  let data = null;
  const text = await response.text();
  try { data = text ? JSON.parse(text) : null; } catch (_) { data = text; }
  return { ok: response.ok, status: response.status, data };
}

// A JSON API answer as a list: either the list itself or the first list-valued field.
function listOf(data, key) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data[key])) return data[key];
  if (data && typeof data === "object") {
    for (const value of Object.values(data)) if (Array.isArray(value)) return value;
  }
  return [];
}

// The field path of one validation error: "scorers[0].params.expected".
function pathOf(error) {
  if (!error || typeof error !== "object") return null;
  for (const key of ["field", "path", "field_path"]) {
    if (typeof error[key] === "string") return error[key];
  }
  if (Array.isArray(error.loc)) {
    let path = "";
    for (const part of error.loc) {
      if (part === "body") continue;
      if (typeof part === "number") path += `[${part}]`;
      else path += path ? `.${part}` : String(part);
    }
    return path;
  }
  return null;
}

// One error as a line: "path: message", but never the path twice (a message that already
// starts with it) and never the bare "body" of a whole-request error.
function labelled(error) {
  const path = error.path;
  if (!path || path === "body" || error.message.startsWith(`${path}:`) || error.message.startsWith(`${path} `)) return error.message;
  return `${path}: ${error.message}`;
}

// Validation errors of an error answer as [{path, message}] (path may be null).
function errorsOf(data) {
  const detail = data && typeof data === "object" && "detail" in data ? data.detail : data;
  const found = [];
  const add = (error) => {
    if (typeof error === "string") {
      const match = error.match(/[A-Za-z_]+(?:\[\d+\])?(?:\.[A-Za-z_]\w*|\[\d+\])+/);
      found.push({ path: match ? match[0] : null, message: error });
    } else if (error && typeof error === "object") {
      const message = error.msg || error.message || error.detail || JSON.stringify(error);
      found.push({ path: pathOf(error), message: String(message) });
    }
  };
  if (Array.isArray(detail)) detail.forEach(add);
  else if (detail && typeof detail === "object" && Array.isArray(detail.errors)) detail.errors.forEach(add);
  else add(detail || "request failed");
  return found;
}

// ---------------------------------------------------------------- dataset upload
function setupUpload() {
  const form = document.getElementById("upload-form");
  if (!form) return;
  const error = document.getElementById("upload-error");
  const ok = document.getElementById("upload-ok");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    show(error, ""); show(ok, "");
    const name = form.elements.name.value.trim();
    const file = form.elements.file.files[0];
    if (!name || !file) { show(error, "Give the dataset a name and choose a file."); return; }
    // the server refuses these too, but a browser rewrites "/api/datasets/.." before it
    // gets there: say the server's line here
    if (name === "." || name === "..") {
      show(error, `dataset name '${name}' cannot be addressed in a URL: choose another`); return;
    }
    // an existing name adds a version: ask first (its description stays). The import
    // creates a new dataset itself and removes it again if the file fails: nothing is left
    // behind by a failed upload.
    const base = `/api/datasets/${encodeURIComponent(name)}`;
    const existing = await api("GET", `${base}/versions`);
    if (existing.ok) {
      const versions = listOf(existing.data, "versions");
      const last = versions[versions.length - 1];
      const what = last ? ` (version ${last.version}, ${last.item_count} items)` : "";
      if (!window.confirm(`Dataset "${name}" exists${what}. Add this file's rows to it as a new version? Its description is kept.`)) {
        show(error, "Nothing uploaded: choose another name for a new dataset."); return;
      }
    } else if (existing.status !== 404) {
      show(error, errorsOf(existing.data).map((e) => e.message).join("; ")); return;
    }
    const upload = new FormData();
    upload.append("file", file, file.name);
    for (const line of form.elements.map.value.split("\n")) {
      if (line.trim()) upload.append("map", line.trim());
    }
    const description = form.elements.description.value.trim();
    if (description && !existing.ok) upload.append("description", description);
    const imported = await api("POST", `${base}/import`, upload);
    if (!imported.ok) {
      show(error, errorsOf(imported.data).map((e) => e.message).join("; ")); return;
    }
    window.location.href = `/datasets/${encodeURIComponent(name)}`;
  });
}

// ---------------------------------------------------------------- scorer forms
// One input per property of the scorer's params JSON Schema. Values are read back loosely
// (a number field with "abc" sends "abc") so the server's validation is the only judge.
function schemaType(prop) {
  if (prop.enum) return "enum";
  if (prop.type) return prop.type;
  for (const option of prop.anyOf || []) {
    if (option.enum) return "enum";
    if (option.type && option.type !== "null") return option.type;
  }
  return "json";
}

function enumOf(prop) {
  if (prop.enum) return prop.enum;
  for (const option of prop.anyOf || []) if (option.enum) return option.enum;
  return [];
}

function fieldInput(name, prop, required, id) {
  const type = schemaType(prop);
  const def = prop.default;
  if (type === "boolean") {
    return el("input", { type: "checkbox", id, name, checked: def === true, dataset: { kind: "boolean" } });
  }
  if (type === "enum") {
    const select = el("select", { id, name, dataset: { kind: "enum" } });
    if (!required && def === undefined) select.append(el("option", { value: "", text: "(default)" }));
    for (const value of enumOf(prop)) {
      select.append(el("option", { value: JSON.stringify(value), text: String(value), selected: value === def }));
    }
    return select;
  }
  if (type === "number" || type === "integer") {
    return el("input", {
      id, name, inputmode: "decimal", dataset: { kind: type },
      placeholder: def === undefined || def === null ? "" : String(def),
    });
  }
  if (type === "string") {
    return el("input", { id, name, dataset: { kind: "string" }, placeholder: def == null ? "" : String(def) });
  }
  return el("textarea", {
    id, name, rows: 2, dataset: { kind: "json" },
    placeholder: def === undefined ? "JSON" : JSON.stringify(def),
  });
}

function readField(input) {
  const kind = input.dataset.kind;
  if (kind === "boolean") return input.checked;
  const raw = input.value;
  if (raw.trim() === "") return undefined;
  if (kind === "enum") return JSON.parse(raw);
  if (kind === "number" || kind === "integer") {
    const number = Number(raw);
    return Number.isNaN(number) ? raw : number;
  }
  if (kind === "json") {
    try { return JSON.parse(raw); } catch (_) { return raw; }
  }
  return raw;
}

let scorerSerial = 0;

function scorerBlock(type) {
  const serial = scorerSerial++;
  const schema = type.params_schema || {};
  const required = new Set(schema.required || []);
  const block = el("div", { class: "scorer-form", dataset: { type: type.type }, "data-testid": `scorer-${type.type}` });
  const head = el("div", { class: "row" },
    el("strong", { text: type.label || type.type }),
    el("code", { text: type.type }),
    el("span", { class: "hint", text: type.kind || "" }));
  const remove = el("button", { type: "button", class: "remove", text: "Remove" });
  remove.addEventListener("click", () => block.remove());
  head.append(remove);
  block.append(head);
  if (type.description) block.append(el("p", { class: "hint", text: type.description }));
  if (type.preview_notes) block.append(el("p", { class: "hint", text: type.preview_notes }));
  for (const [name, prop] of Object.entries(schema.properties || {})) {
    const id = `scorer-${serial}-${name}`;
    const input = fieldInput(name, prop, required.has(name), id);
    input.classList.add("param");
    const label = el("label", { for: id, text: `${prop.title || name}${required.has(name) ? " *" : ""}` });
    const field = el("div", { class: "field", dataset: { param: name } }, label, input,
      el("span", { class: "hint", text: prop.description || "" }),
      el("span", { class: "field-error", role: "alert", hidden: true }));
    block.append(field);
  }
  block.append(el("p", { class: "field-error scorer-error", role: "alert", hidden: true }));
  return block;
}

function scorerConfigs(container) {
  return [...container.querySelectorAll(".scorer-form")].map((block) => {
    const params = {};
    for (const input of block.querySelectorAll(".param")) {
      const value = readField(input);
      if (value !== undefined) params[input.name] = value;
    }
    return { type: block.dataset.type, params };
  });
}

function clearErrors(root) {
  root.querySelectorAll(".field-error").forEach((node) => show(node, ""));
  root.querySelectorAll(".invalid").forEach((node) => node.classList.remove("invalid"));
}

// Put each error next to the field its path names; return the ones no field claimed.
function placeErrors(container, errors) {
  const blocks = [...container.querySelectorAll(".scorer-form")];
  const left = [];
  for (const error of errors) {
    const match = error.path && error.path.match(/^scorers\[(\d+)\](?:\.params)?(?:\.(\w+))?/);
    const block = match ? blocks[Number(match[1])] : null;
    if (!block) { left.push(error); continue; }
    const field = match[2] ? block.querySelector(`.field[data-param="${match[2]}"]`) : null;
    const target = field ? field.querySelector(".field-error") : block.querySelector(".scorer-error");
    show(target, [target.textContent, error.message].filter(Boolean).join("; "));
    const input = field ? field.querySelector("input, select, textarea") : null;
    if (input) input.classList.add("invalid");
  }
  return left;
}

async function firstRows(dataset, count) {
  const answer = await api("GET", `/api/datasets/${encodeURIComponent(dataset)}/items?offset=0&limit=${count}`);
  if (!answer.ok) throw new Error(errorsOf(answer.data).map((e) => e.message).join("; "));
  return listOf(answer.data, "items").slice(0, count).map((item) => ({
    input: item.input, output: item.output,
    expected_output: item.expected_output, context: item.context,
  }));
}

function resultText(result) {
  if (!result) return "";
  if (result.status === "pending") return "pending…";
  if (result.status === "error") return `error: ${(result.error && result.error.message) || ""}`;
  if (result.status === "not_scorable") return "not scorable";
  const score = typeof result.score === "number" ? result.score.toFixed(3) : String(result.score);
  return result.reason ? `${score} (${result.reason})` : score;
}

// The scorer picker (#scorer-picker, #add-scorer) filling #scorer-forms with generated
// forms; ``decorate`` may add fields to each new block (the optimizer's weight).
function setupScorerPicker(decorate) {
  const picker = document.getElementById("scorer-picker");
  const forms = document.getElementById("scorer-forms");
  const scorersError = document.getElementById("scorers-error");
  const types = new Map();

  api("GET", "/api/scorers").then((answer) => {
    picker.innerHTML = "";
    if (!answer.ok) { show(scorersError, "Could not load the scorer catalogue."); return; }
    picker.append(el("option", { value: "", text: "choose a scorer" }));
    for (const type of listOf(answer.data, "scorers")) {
      types.set(type.type, type);
      picker.append(el("option", { value: type.type, text: `${type.label || type.type} (${type.kind || ""})` }));
    }
    picker.dataset.loaded = "true";
  });

  document.getElementById("add-scorer").addEventListener("click", () => {
    const type = types.get(picker.value);
    if (!type) return;
    const block = scorerBlock(type);
    if (decorate) decorate(block);
    forms.append(block);
  });
  return { forms, scorersError };
}

function setupLauncher() {
  const form = document.getElementById("launcher");
  if (!form) return;
  const { forms, scorersError } = setupScorerPicker();
  const launchError = document.getElementById("launch-error");
  const preview = document.getElementById("preview");

  const check = () => {
    clearErrors(form); show(scorersError, ""); show(launchError, "");
    show(document.getElementById("target-error"), "");
    const scorers = scorerConfigs(forms);
    if (!scorers.length) { show(scorersError, "Add at least one scorer."); return null; }
    if (!form.elements.dataset.value) { show(launchError, "Choose a dataset."); return null; }
    return scorers;
  };
  const report = (answer, fallback) => {
    let left = placeErrors(forms, errorsOf(answer.data));
    const targetErrors = left.filter((e) => e.path && e.path.startsWith("target"));
    if (targetErrors.length) {
      show(document.getElementById("target-error"), targetErrors.map(labelled).join("; "));
      left = left.filter((e) => !targetErrors.includes(e));
    }
    if (left.length) show(fallback, left.map(labelled).join("; "));
  };

  document.getElementById("preview-button").addEventListener("click", async () => {
    const scorers = check();
    if (!scorers) return;
    preview.textContent = "scoring…";
    let rows;
    try { rows = await firstRows(form.elements.dataset.value, 3); } catch (error) {
      preview.textContent = ""; show(launchError, error.message); return;
    }
    const answer = await api("POST", "/api/scorers/test", { scorers, rows });
    if (!answer.ok) { preview.textContent = ""; report(answer, scorersError); return; }
    const table = el("table", { class: "grid", id: "preview-table" });
    const head = el("tr", {}, el("th", { text: "Output" }));
    scorers.forEach((s) => head.append(el("th", { text: s.type })));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    const results = answer.data.results || [];
    rows.forEach((row, i) => {
      const tr = el("tr", {}, el("td", {}, el("pre", { class: "clip", text: typeof row.output === "string" ? row.output : JSON.stringify(row.output) })));
      scorers.forEach((_, j) => tr.append(el("td", { id: `preview-${i}-${j}`, text: resultText((results[i] || [])[j]) })));
      body.append(tr);
    });
    table.append(body);
    preview.replaceChildren(table);
    const pending = results.some((row) => row.some((r) => r && r.status === "pending"));
    if (pending && answer.data.test_id) {
      const source = new EventSource(`/api/scorers/test/${encodeURIComponent(answer.data.test_id)}/events`);
      source.addEventListener("result", (event) => {
        const data = JSON.parse(event.data);
        const cell = document.getElementById(`preview-${data.row}-${data.scorer}`);
        if (cell) cell.textContent = resultText(data.result);
      });
      source.addEventListener("done", () => source.close());
      source.onerror = () => source.close();
    }
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const scorers = check();
    if (!scorers) return;
    const body = { dataset: form.elements.dataset.value, scorers };
    const name = form.elements.name.value.trim();
    if (name) body.name = name;
    const target = form.elements.target.value.trim();
    if (target) {
      try { body.target = JSON.parse(target); } catch (error) {
        show(document.getElementById("target-error"), `target: not valid JSON (${error.message})`);
        return;
      }
    }
    for (const key of ["repeats", "concurrency"]) {
      const raw = form.elements[key].value.trim();
      if (raw) body[key] = Number.isNaN(Number(raw)) ? raw : Number(raw);
    }
    const answer = await api("POST", "/api/runs", body);
    if (!answer.ok) { report(answer, launchError); return; }
    window.location.href = `/runs/${encodeURIComponent(answer.data.run_id)}`;
  });
}

// ---------------------------------------------------------------- live progress
// While a run goes, the items table is re-read from the server (the same page, the same
// filters, sort and offset) at most once a second, so stored items appear as they finish
// rather than "0 matching results" until the end. One request at a time; a progress event
// during a request asks for one more afterwards.
let itemsBusy = false;
let itemsAgain = false;
async function refreshItems() {
  const holder = document.getElementById("items-live");
  if (!holder) return;
  if (itemsBusy) { itemsAgain = true; return; }
  itemsBusy = true;
  try {
    const response = await fetch(window.location.href, { headers: { Accept: "text/html" } });
    if (response.ok) {
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("items-live");
      if (fresh) holder.replaceChildren(...fresh.childNodes);
    }
  } catch (error) {
    // a lost request: the next progress event (or the reload at the end) catches up
  } finally {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    itemsBusy = false;
    if (itemsAgain) { itemsAgain = false; refreshItems(); }
  }
}

// Cancel (a run this server executes) and Resume (an interrupted or failed run): one API
// call each, then the page reloads to show the stored state (a resumed run is live again).
function setupRunControl() {
  const box = document.querySelector("[data-run-control]");
  if (!box) return;
  const errorNode = box.querySelector("[data-run-error]");
  box.addEventListener("click", async (event) => {
    const button = event.target.closest("[data-run-action]");
    if (!button) return;
    show(errorNode, "");
    button.disabled = true;
    const answer = await api("POST", `${box.dataset.runControl}/${button.dataset.runAction}`);
    if (answer.ok) {
      window.sessionStorage.removeItem(`assay.reloaded.${document.getElementById("progress").dataset.runId}`);
      window.location.reload();
      return;
    }
    button.disabled = false;
    const first = errorsOf(answer.data)[0];
    show(errorNode, first ? first.message : `${button.dataset.runAction} failed (${answer.status})`);
  });
}

function setupProgress() {
  const section = document.getElementById("progress");
  if (!section || section.dataset.live !== "true") return;
  const bar = document.getElementById("progress-bar");
  const text = document.getElementById("progress-text");
  const status = document.getElementById("run-status");
  const source = new EventSource(`/api/runs/${encodeURIComponent(section.dataset.runId)}/events`);
  source.addEventListener("progress", (event) => {
    const data = JSON.parse(event.data);
    if (data.total) bar.max = data.total;
    bar.value = data.done;
    text.textContent = `${data.done} / ${data.total} done${data.errors ? `, ${data.errors} errors` : ""}`;
    status.textContent = "running";
    const count = document.querySelector("[data-testid=run-count]");
    const planned = data.total || data.done;
    if (count) count.textContent = `${data.done.toLocaleString("en-US")}${data.total ? ` of ${data.total.toLocaleString("en-US")}` : ""} result${planned === 1 ? "" : "s"}`;
    refreshItems();
  });
  // Reload once when the run finishes (the server renders the summary and items). If the
  // page is still "live" after that reload, the store disagrees with the event stream
  // (e.g. a run left "running" by a dead process): say so instead of reloading forever.
  const reloadKey = `assay.reloaded.${section.dataset.runId}`;
  const reloadedBefore = window.sessionStorage.getItem(reloadKey) === "1";
  window.sessionStorage.removeItem(reloadKey);
  source.addEventListener("finished", () => {
    source.close();
    status.textContent = "finished";
    if (reloadedBefore) {
      text.textContent += " (the run's stored status has not caught up; reload later)";
      return;
    }
    window.sessionStorage.setItem(reloadKey, "1");
    window.location.reload();
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) text.textContent += " (live updates stopped; reload the page)";
  };
}

// ---------------------------------------------------------------- annotations
function setupAnnotations() {
  const form = document.getElementById("annotation-form");
  if (!form) return;
  const url = `/api/runs/${encodeURIComponent(form.dataset.runId)}/items/${encodeURIComponent(form.dataset.itemId)}/annotations`;
  const error = document.getElementById("annotation-error");
  const history = document.querySelector("#annotation-history tbody");
  const author = form.elements.author;
  author.value = window.localStorage.getItem("assay.author") || "";

  const load = async () => {
    const answer = await api("GET", url);
    if (!answer.ok) { show(error, errorsOf(answer.data).map((e) => e.message).join("; ")); return; }
    history.replaceChildren(...listOf(answer.data, "annotations").map((a) => el("tr", { class: "annotation" },
      el("td", { text: a.created_at ? new Date(a.created_at * 1000).toLocaleString() : "" }),
      el("td", { text: a.author || "" }),
      el("td", { text: a.label == null ? "" : String(a.label) }),
      el("td", { text: a.score == null ? "" : String(a.score) }),
      el("td", { text: a.scorer || "" }),
      el("td", { text: a.comment || "" }))));
  };
  load();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    show(error, "");
    const body = { author: author.value.trim() };
    const label = form.querySelector('input[name="label"]:checked');
    if (label) body.label = label.value;
    const score = form.elements.score.value.trim();
    if (score) body.score = Number.isNaN(Number(score)) ? score : Number(score);
    const comment = form.elements.comment.value.trim();
    if (comment) body.comment = comment;
    if (form.elements.scorer && form.elements.scorer.value) body.scorer = form.elements.scorer.value;
    if (form.elements.repeat && form.elements.repeat.value) body.repeat = Number(form.elements.repeat.value);
    const answer = await api("POST", url, body);
    if (!answer.ok) {
      show(error, errorsOf(answer.data).map(labelled).join("; "));
      return;
    }
    window.localStorage.setItem("assay.author", body.author);
    form.elements.comment.value = "";
    form.elements.score.value = "";
    await load();
    if (form.dataset.thenNext && queue && queue.dataset.next) window.location.assign(queue.dataset.next);
    else if (form.dataset.thenNext) window.location.reload();
    delete form.dataset.thenNext;
  });

  // the review queue: next/previous, "unreviewed only", keyboard shortcuts
  const queue = document.querySelector("[data-testid=review-queue]");
  const saveNext = document.getElementById("annotation-submit-next");
  if (saveNext) saveNext.addEventListener("click", () => { form.dataset.thenNext = "1"; form.requestSubmit(); });
  const unreviewed = document.getElementById("queue-unreviewed");
  if (unreviewed) unreviewed.addEventListener("change", () => {
    window.location.assign(unreviewed.dataset.all + (unreviewed.checked ? "?queue=unreviewed" : ""));
  });
  document.addEventListener("keydown", (event) => {
    const typing = event.target.closest && event.target.closest("input, textarea, select");
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.dataset.thenNext = "1";
      form.requestSubmit();
      return;
    }
    if (typing) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const go = (key) => { if (queue && queue.dataset[key]) window.location.assign(queue.dataset[key]); };
    const actions = {
      p: () => { document.getElementById("annotation-pass").checked = true; },
      f: () => { document.getElementById("annotation-fail").checked = true; },
      s: () => form.elements.score.focus(),
      c: () => form.elements.comment.focus(),
      j: () => go("next"), ArrowRight: () => go("next"),
      k: () => go("previous"), ArrowLeft: () => go("previous"),
    };
    const action = actions[event.key];
    if (action) { event.preventDefault(); action(); }
  });
}

// ---------------------------------------------------------------- compare statistics
// The compare page shows its rows at once; the paired statistics (a bootstrap over every
// paired item, seconds for 100,000 items) arrive here from the API when they are ready.
function score(value) {
  return value === null || value === undefined ? "" : Number(value).toFixed(3);
}

function comparisonSection(c) {
  const label = (ref) => [el("code", { text: ref.id.slice(0, 12) }), ` ${ref.name || ""}`];
  const section = el("section", { class: "comparison", "data-testid": "comparison-stats" },
    el("h2", {}, ...label(c.b), " against baseline ", ...label(c.a)));
  for (const warning of c.warnings) section.append(el("p", { class: "warning", text: warning }));
  const counts = el("p", { text: `${c.items_in_both} items in both · ${c.only_in_a.length} only in the baseline · ${c.only_in_b.length} only in this run` });
  if (c.has_regression) counts.append(" · ", el("strong", { class: "error", text: "significant regression" }));
  section.append(counts);
  const head = ["Scorer", "n paired", "Baseline", "This run", "Δ", "95% CI of Δ", "Verdict", "Regressed items", "Improved items"];
  const body = el("tbody");
  for (const s of c.scorers) {
    const name = el("td", { text: s.scorer_label });
    if (!s.higher_is_better) name.append(" ", el("span", { class: "hint", text: "(lower is better)" }));
    const ci = s.ci_low === null ? "" : `${score(s.ci_low)} – ${score(s.ci_high)}`;
    body.append(el("tr", {}, name, el("td", { text: String(s.n_paired) }),
      el("td", { text: score(s.mean_a) }), el("td", { text: score(s.mean_b) }),
      el("td", { text: score(s.delta) }), el("td", { text: ci }),
      el("td", { class: `verdict-${s.verdict}`, text: s.verdict.replaceAll("_", " ") }),
      el("td", { text: String(s.n_regressed) }), el("td", { text: String(s.n_improved) })));
  }
  section.append(el("table", { class: "grid", "data-testid": "paired-stats" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))), body));
  return section;
}

async function setupCompareStatistics() {
  const holder = document.getElementById("compare-statistics");
  if (!holder) return;
  const status = document.getElementById("compare-statistics-status");
  let answer;
  try {
    answer = await api("GET", holder.dataset.url);
  } catch (error) {
    answer = { ok: false, status: 0, data: { detail: error.message } };
  }
  if (!answer.ok) {
    const detail = answer.data && answer.data.detail ? answer.data.detail : answer.status;
    status.className = "error";
    status.textContent = `The paired statistics could not be computed: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`;
    return;
  }
  status.remove();
  for (const c of answer.data) holder.append(comparisonSection(c));
}

// Copy buttons (the optimization page's best prompt): the clipboard API where the page is
// a secure context, else a hidden textarea and execCommand, so plain-http servers work too.
function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    return navigator.clipboard.writeText(text);
  }
  const area = el("textarea", { style: "position:fixed;opacity:0" });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
}

function armCopyButton(button) {
  button.addEventListener("click", () => {
    const source = document.getElementById(button.dataset.copyTarget);
    if (!source) return;
    copyText(source.textContent).then(
      () => { button.textContent = "Copied"; },
      () => { button.textContent = "Copy failed: select the text"; },
    );
  });
  return button;
}

function setupCopyButtons() {
  for (const button of document.querySelectorAll("button[data-copy-target]")) armCopyButton(button);
}

// ---------------------------------------------------------------- optimization launcher
// Field errors of the API (paths such as budget.max_metric_calls, train.dataset,
// candidate) go next to the form row whose data-field is the longest prefix of the path.
function placeFieldErrors(form, errors) {
  const rows = [...form.querySelectorAll("[data-field]")];
  const left = [];
  for (const error of errors) {
    const path = error.path || "";
    const owner = rows
      .filter((row) => {
        const field = row.dataset.field;
        return path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);
      })
      .sort((a, b) => b.dataset.field.length - a.dataset.field.length)[0];
    const target = owner ? owner.querySelector(".field-error") : null;
    if (!target) { left.push(error); continue; }
    show(target, [target.textContent, error.message].filter(Boolean).join("; "));
    const input = owner.querySelector("input, select, textarea");
    if (input) input.classList.add("invalid");
  }
  return left;
}

function weightField(block) {
  const id = `scorer-weight-${scorerSerial - 1}`;  // scorerBlock just took its serial
  block.append(el("div", { class: "field", dataset: { param: "weight" } },
    el("label", { for: id, text: "Weight" }),
    el("input", { id, class: "weight", inputmode: "decimal", placeholder: "1" }),
    el("span", { class: "hint", text: "Share of this scorer in the row score the optimizer maximizes (0: recorded only)." }),
    el("span", { class: "field-error", role: "alert", hidden: true })));
}

function asNumber(raw) {
  return Number.isNaN(Number(raw)) ? raw : Number(raw);
}

function optimizeBody(form, forms) {
  const value = (name) => (form.elements[name] ? form.elements[name].value.trim() : "");
  const body = {};
  if (value("name")) body.name = value("name");
  for (const split of ["train", "val", "test"]) {
    if (value(split)) body[split] = { dataset: value(split) };
  }
  body.candidate = {};
  for (const row of form.querySelectorAll("#components .component")) {
    const name = row.querySelector(".component-name").value.trim();
    const text = row.querySelector(".component-text").value;
    if (name || text.trim()) body.candidate[name] = text;
  }
  if (value("prompt")) body.prompt = form.elements.prompt.value;
  for (const key of ["task_model", "task_base_url", "reflection_model", "reflection_base_url", "candidate_selection"]) {
    if (value(key)) body[key] = value(key);
  }
  body.scorers = scorerConfigs(forms);
  [...forms.querySelectorAll(".scorer-form")].forEach((block, i) => {
    const weight = block.querySelector("input.weight");
    if (weight && weight.value.trim()) body.scorers[i].weight = asNumber(weight.value.trim());
  });
  body.budget = {};
  for (const key of ["max_metric_calls", "max_iterations", "max_cost_usd", "max_wall_time_s"]) {
    if (value(`budget.${key}`)) body.budget[key] = asNumber(value(`budget.${key}`));
  }
  for (const key of ["minibatch_size", "concurrency", "seed"]) {
    if (value(key)) body[key] = asNumber(value(key));
  }
  return body;
}

function setupOptimizeForm() {
  const form = document.getElementById("optimize-form");
  if (!form) return;
  const { forms, scorersError } = setupScorerPicker(weightField);
  const error = document.getElementById("optimize-error");
  const components = document.getElementById("components");
  document.getElementById("add-component").addEventListener("click", () => {
    const remove = el("button", { type: "button", class: "remove", text: "Remove" });
    const row = el("div", { class: "component row" },
      el("input", { class: "component-name", "aria-label": "component name", placeholder: "answer_format" }),
      el("textarea", { class: "component-text", rows: 3, "aria-label": "component text" }), remove);
    remove.addEventListener("click", () => row.remove());
    components.insertBefore(row, components.querySelector(".field-error"));
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form); show(error, ""); show(scorersError, "");
    const answer = await api("POST", "/api/optimize", optimizeBody(form, forms));
    if (answer.ok) { window.location.href = answer.data.page_url; return; }
    const left = placeFieldErrors(form, placeErrors(forms, errorsOf(answer.data)));
    if (left.length) show(error, left.map(labelled).join("; "));
  });
}

// ---------------------------------------------------------------- live optimization
// The optimization page while it runs: status, log, lineage, score trend, best prompt and
// scoreboard follow /api/optimizations/{id}/events. Every text goes in as textContent.
function limitText(value, bound, prefix = "") {
  return bound === null || bound === undefined ? `${prefix}${value}` : `${prefix}${value}/${prefix}${bound}`;
}

function statusText(s) {
  const best = s.best_val_score === null ? "—" : score(s.best_val_score);
  const seed = s.seed_val_score === null ? "" : ` (seed ${score(s.seed_val_score)})`;
  return `iteration ${limitText(s.iteration, s.max_iterations)} · metric calls ${limitText(s.metric_calls, s.max_metric_calls)}`
    + ` · cost ${limitText(s.cost_usd.toFixed(4), s.max_cost_usd, "$")} · best val ${best}${seed}`
    + ` · ${limitText(s.elapsed_s.toFixed(1), s.max_wall_time_s)} s`;
}

function lineageList(nodes, children) {
  const list = el("ul", { class: "lineage" });
  for (const c of nodes) {
    const known = (idx) => children.has(idx);
    let text = `candidate ${c.idx} · iteration ${c.iteration} · val ${score(c.val_score)}`;
    if (c.changed.length) text += ` · changed ${c.changed.join(", ")}`;
    const others = c.parents.slice(1).filter(known);
    if (others.length) text += ` · also from ${others.join(", ")}`;
    const item = el("li", { "data-testid": `candidate-${c.idx}`, text });
    const below = children.get(c.idx) || [];
    if (below.length) item.append(lineageList(below, children));
    list.append(item);
  }
  return list;
}

function renderLineage(holder, candidates) {
  const children = new Map([...candidates.keys()].map((idx) => [idx, []]));
  const roots = [];
  for (const c of [...candidates.values()].sort((a, b) => a.idx - b.idx)) {
    const parent = c.parents.length && children.has(c.parents[0]) ? c.parents[0] : null;
    (parent === null ? roots : children.get(parent)).push(c);
  }
  holder.replaceChildren(lineageList(roots, children));
}

function renderBest(holder, c) {
  const parts = [el("p", { class: "hint", text: `Candidate ${c.idx}, the highest validation score (${score(c.val_score)}).` })];
  Object.entries(c.components).forEach(([name, text], i) => {
    parts.push(el("h3", { text: name }),
      el("pre", { class: "block", id: `best-${i + 1}`, "data-testid": "best-prompt", text }),
      armCopyButton(el("button", { type: "button", class: "copy", dataset: { copyTarget: `best-${i + 1}` }, text: "Copy" })));
  });
  holder.replaceChildren(...parts);
}

function cellText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function renderScoreboard(holder, board) {
  const head = ["Split", "Item", "Input", "Expected", "Output", "Row score", ...board.scorers.map((s) => s.label)];
  const body = el("tbody");
  for (const r of board.rows) {
    const output = el("td", {}, el("pre", { class: "clip", text: cellText(r.output) }));
    if (r.error) output.append(el("span", { class: "error", text: r.error }));
    const row = el("tr", {}, el("td", { text: r.split }), el("td", {}, el("code", { text: r.item_id })),
      el("td", {}, el("pre", { class: "clip", text: cellText(r.input) })),
      el("td", {}, el("pre", { class: "clip", text: cellText(r.expected_output) })), output,
      el("td", { text: score(r.score) }));
    for (const s of board.scorers) {
      const c = r.scorers[s.id];
      const cell = el("td", { text: c ? (c.status === "ready" ? score(c.score) : c.status) : "" });
      if (c && c.reason) cell.append(" ", el("span", { class: "hint", text: c.reason }));
      row.append(cell);
    }
    body.append(row);
  }
  holder.replaceChildren(
    el("p", { class: "hint", text: `Candidate ${board.candidate_idx} on every validation row and on the train rows it was evaluated on; each cell is the scorer's score with its reason.` }),
    el("table", { class: "grid", "data-testid": "scoreboard" },
      el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))), body));
}

function setupOptimizationLive() {
  const section = document.getElementById("opt-live");
  if (!section) return;
  const id = section.dataset.optimizationId;
  const base = `/api/optimizations/${encodeURIComponent(id)}`;
  const errorNode = document.getElementById("opt-error");
  const failed = (answer) => show(errorNode, errorsOf(answer.data).map((e) => e.message).join("; "));
  const resume = document.getElementById("opt-resume");
  if (resume) {
    resume.addEventListener("click", async () => {
      const answer = await api("POST", `${base}/resume`);
      if (answer.ok) window.location.reload(); else failed(answer);
    });
  }
  if (section.dataset.live !== "true") return;
  const cancel = document.getElementById("opt-cancel");
  if (cancel) {
    cancel.addEventListener("click", async () => {
      cancel.disabled = true;
      const answer = await api("POST", `${base}/cancel`);
      if (!answer.ok) { failed(answer); cancel.disabled = false; }
    });
  }
  const status = document.getElementById("opt-status");
  const progress = document.getElementById("opt-progress");
  const log = document.getElementById("opt-log");
  const candidates = new Map();
  const source = new EventSource(`${base}/events`);
  // Reload once at the end (the server renders diagnostics and cost); if the page is still
  // live after that reload, say so rather than reloading forever.
  const reloadKey = `assay.reloaded.optimization.${id}`;
  const reloadedBefore = window.sessionStorage.getItem(reloadKey) === "1";
  window.sessionStorage.removeItem(reloadKey);
  const finish = () => {
    source.close();
    if (cancel) cancel.hidden = true;
    if (reloadedBefore) return;
    window.sessionStorage.setItem(reloadKey, "1");
    window.location.reload();
  };
  source.addEventListener("status", (event) => {
    const s = JSON.parse(event.data);
    status.textContent = s.state;
    status.className = `status status-${s.state}`;
    progress.textContent = statusText(s);
  });
  source.addEventListener("log", (event) => {
    const line = JSON.parse(event.data);
    const where = line.iteration === null ? "" : `iteration ${line.iteration} · `;
    log.append(`[${line.channel}] ${where}${line.message}\n`);
    while (log.childNodes.length > 500) log.firstChild.remove();
  });
  source.addEventListener("checkpoint", (event) => {
    const c = JSON.parse(event.data);
    candidates.set(c.idx, c);
    renderLineage(document.getElementById("lineage"), candidates);
    document.getElementById("trend").replaceChildren(el("img", {
      src: `/optimizations/${encodeURIComponent(id)}/trend.svg?candidates=${candidates.size}`,
      alt: "Validation score by candidate", "data-testid": "score-trend-live",
    }));
    if (c.is_best) renderBest(document.getElementById("best-prompt"), c);
  });
  source.addEventListener("scoreboard", (event) => {
    renderScoreboard(document.getElementById("scoreboard"), JSON.parse(event.data));
  });
  source.addEventListener("result", (event) => {
    const summary = document.getElementById("opt-summary");
    summary.textContent = JSON.parse(event.data).result.summary;
    summary.hidden = false;
    finish();
  });
  // "error" is also what EventSource calls a lost connection: ours carries data
  source.addEventListener("error", (event) => {
    if (event.data === undefined) {
      if (source.readyState === EventSource.CLOSED) show(errorNode, "live updates stopped; reload the page");
      return;
    }
    const error = JSON.parse(event.data);
    status.textContent = error.state;
    show(errorNode, error.message);
    finish();
  });
}

// ---------------------------------------------------------------- manage (rename, tag, delete)
// A run's or dataset's own controls: every change is one API call; a delete asks first and
// names what goes, then leaves for the list page.
function setupManage() {
  for (const box of document.querySelectorAll("[data-manage]")) {
    const url = box.dataset.manage;
    const errorNode = box.querySelector("[data-manage-error]");
    const done = async (answer) => {
      if (answer.ok) return true;
      const first = errorsOf(answer.data)[0];
      show(errorNode, first ? first.message : `failed (${answer.status})`);
      return false;
    };
    box.addEventListener("click", async (event) => {
      const button = event.target.closest("[data-manage-action]");
      if (!button) return;
      show(errorNode, "");
      const action = button.dataset.manageAction;
      if (action === "delete") {
        const what = `${box.dataset.kind} ${box.dataset.label}`;
        if (!window.confirm(`Delete ${what}? This cannot be undone.`)) return;
        if (await done(await api("DELETE", url))) window.location.assign(box.dataset.after);
      } else if (action === "rename") {
        const name = box.querySelector("[data-manage-name]").value;
        const answer = await api("PATCH", url, { name });
        if (!(await done(answer))) return;
        // a dataset's page lives at its name: go to the new one (a run's id stays)
        if (box.dataset.renamedAt) window.location.assign(box.dataset.renamedAt + encodeURIComponent(answer.data.name));
        else window.location.reload();
      } else if (action === "tag") {
        const tag = box.querySelector("[data-manage-tag]").value.trim();
        if (!tag) return show(errorNode, "type a tag first");
        if (await done(await api("PATCH", url, { add_tags: [tag] }))) window.location.reload();
      }
    });
  }
}

// ---------------------------------------------------------------- scorer catalogue filter
function setupScorerFilter() {
  const input = document.getElementById("scorer-filter");
  if (!input) return;
  input.addEventListener("input", () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const row of document.querySelectorAll("[data-search]")) {
      row.hidden = !words.every((word) => row.dataset.search.includes(word));
    }
  });
}

// ---------------------------------------------------------------- compare: picker and filters
function setupCompareTools() {
  const find = document.getElementById("compare-find");
  const select = document.getElementById("compare-baseline");
  if (find && select) find.addEventListener("input", () => {
    const words = find.value.toLowerCase().split(/\s+/).filter(Boolean);
    let first = null;
    for (const option of select.options) {
      option.hidden = !words.every((word) => (option.dataset.search || "").includes(word));
      if (!option.hidden && !first) first = option;
    }
    if (first && select.selectedOptions[0] && select.selectedOptions[0].hidden) select.value = first.value;
  });
  const scorer = document.getElementById("compare-filter-scorer");
  const state = document.getElementById("compare-filter-state");
  if (!scorer || !state) return;
  // the filters apply over the whole comparison on the server: a change reloads page 1
  const apply = () => scorer.form.submit();
  scorer.addEventListener("change", apply);
  state.addEventListener("change", apply);
}

// ---------------------------------------------------------------- run page: histograms
// Loaded after the page (counting a large run's scores should not delay its first items).
async function loadHistograms() {
  const holder = document.getElementById("score-histograms");
  if (!holder) return;
  try {
    const response = await fetch(holder.dataset.url, { headers: { Accept: "text/html" } });
    if (!response.ok) throw new Error(`${response.status}`);
    holder.innerHTML = await response.text();  // SVG drawn and escaped by the server
  } catch (error) {
    holder.textContent = `The score histograms did not load (${error.message}).`;
  }
}

// The page size applies at once (the filters form carries it).
function setupPageSize() {
  const select = document.querySelector("#item-filters select[name=page_size]");
  if (select) select.addEventListener("change", () => select.form.submit());
}

// ---------------------------------------------------------------- runs list: trend picker
// A new dataset shows its trend at once (its first scorer when the chosen one is not its).
function setupTrendPicker() {
  const data = document.getElementById("trend-data");
  if (data) data.addEventListener("change", () => data.form.submit());
}

document.addEventListener("DOMContentLoaded", () => {
  setupTrendPicker();
  setupPageSize();
  loadHistograms();
  setupManage();
  setupCompareTools();
  setupScorerFilter();
  setupCopyButtons();
  setupUpload();
  setupLauncher();
  setupOptimizeForm();
  setupOptimizationLive();
  setupProgress();
  setupRunControl();
  setupAnnotations();
  setupCompareStatistics();
});
