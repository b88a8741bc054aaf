// The actor-host dashboard. One WebSocket to /api/ws (JSON-RPC 2.0, docs/API.md)
// carries both the live feed (`watch`, then `update` notifications) and the
// runs started from the page. Everything a peer sent (ids, names, schemas,
// results) reaches the page as text nodes, never as markup.

const STATUS = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED',
  'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE',
  'DATA_LOSS', 'UNAUTHENTICATED'];
const TOKEN_KEY = 'actor-host-token';

const $ = (id) => document.getElementById(id);

/** Builds an element; strings among the children become text nodes. */
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

function pretty(value) {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

function time(ms) {
  if (!ms) return '–';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '–' : d.toLocaleTimeString();
}

/** A JSON-RPC error object as a person reads it: "STATUS: message". */
function errorText(e) {
  if (!e) return 'Unknown error';
  if (typeof e === 'string') return e;
  const code = e.data && typeof e.data.code === 'number' ? e.data.code : undefined;
  const status = code !== undefined && STATUS[code] ? STATUS[code] : undefined;
  let message = (typeof e.message === 'string' && e.message) ||
    (e.data && typeof e.data.message === 'string' && e.data.message) || 'Unknown error';
  if (status && !message.startsWith(status)) message = `${status}: ${message}`;
  return message;
}

// ---------------------------------------------------------------- the link

class Link {
  constructor() {
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject}
    this.runs = new Map();    // id -> {onTrace, onChunk}
    this.retryMs = 500;
    this.onUpdate = () => {};
    this.onState = () => {};
    this.onOpen = () => {};
  }

  url() {
    const u = new URL('/api/ws', location.href);
    u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) u.searchParams.set('token', token);
    return u.href;
  }

  connect() {
    this.onState('connecting…', '');
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onopen = () => {
      this.retryMs = 500;
      this.onState('live', 'live');
      this.onOpen();
    };
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const [, p] of this.pending) p.reject({ message: 'The connection to the manager was lost' });
      this.pending.clear();
      this.runs.clear();
      this.onState(`disconnected; retrying in ${Math.round(this.retryMs / 100) / 10} s`, 'down');
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    };
  }

  receive(text) {
    let m;
    try { m = JSON.parse(text); } catch { return; }
    if (m.method === 'update') return this.onUpdate(m.params.topic, m.params.data);
    if (m.method === 'runActionState' || m.method === 'streamChunk') {
      const run = this.runs.get(m.params.requestId);
      if (!run) return;
      if (m.method === 'streamChunk') run.onChunk(m.params.chunk);
      else if (m.params.state && m.params.state.traceId) run.onTrace(m.params.state.traceId);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    this.runs.delete(m.id);
    if (m.error) p.reject(m.error);
    else p.resolve(m.result);
  }

  request(method, params, run) {
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject({ message: 'Not connected to the manager' });
        return;
      }
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      if (run) this.runs.set(id, run);
      if (run) run.id = id;
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  notify(method, params) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN)
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }
}

const link = new Link();
const state = {
  runtimes: [],
  workers: [],
  services: [],
  cluster: { self: null, nodes: [] },
  samples: [],
  intervalMs: 2000,
  catalogFor: null, // the runtime whose catalog is shown
  actions: {},
  selected: null,   // the action key shown in the runner
  run: null,        // the run in flight: {id, traceId, runtimeId}
};

// ---------------------------------------------------------------- overview

function renderRuntimes() {
  const body = clear($('runtimes').tBodies[0]);
  for (const r of state.runtimes) {
    body.append(el('tr', {},
      el('td', { class: 'mono' }, r.qualifiedId || r.id),
      el('td', {}, r.name || ''),
      el('td', {}, r.genkitVersion || ''),
      el('td', {}, r.pid ?? ''),
      el('td', {}, r.node || '–'),
      el('td', {}, r.protocol || 'v2'),
      el('td', { title: r.timestamp || '' }, r.timestamp ? time(Date.parse(r.timestamp)) : '–')));
  }
  $('runtimes-count').textContent = `(${state.runtimes.length})`;
  $('runtimes-empty').hidden = state.runtimes.length > 0;
  renderRuntimeSelect();
}

function renderServices() {
  const body = clear($('services').tBodies[0]);
  for (const s of state.services) {
    body.append(el('tr', {},
      el('td', {}, s.name),
      el('td', { class: 'mono' }, s.runtimeId || '–'),
      el('td', { class: `state state-${s.state}` }, s.state),
      el('td', {}, s.pid ?? '–'),
      el('td', {}, s.restarts),
      el('td', {}, time(s.since))));
  }
  $('services-count').textContent = `(${state.services.length})`;
  $('services-empty').hidden = state.services.length > 0;
}

function tags(items, text) {
  return el('ul', { class: 'tags' }, items.map((x) => el('li', {}, text(x))));
}

function renderWorkers() {
  const body = clear($('workers').tBodies[0]);
  for (const w of state.workers) {
    body.append(el('tr', {},
      el('td', {}, el('span', {}, w.name || w.id), el('br'), el('small', { class: 'mono muted' }, w.id)),
      el('td', {}, [w.runtime, w.version].filter(Boolean).join(' ')),
      el('td', {}, tags(w.functions || [], (f) => f.id)),
      el('td', {}, tags(w.triggers || [], (t) => `${t.type} → ${t.function}`)),
      el('td', {}, time(w.connected_at_ms))));
  }
  $('workers-count').textContent = `(${state.workers.length})`;
  $('workers-empty').hidden = state.workers.length > 0;
  renderRuntimeSelect();
}

function renderCluster() {
  const c = state.cluster || {};
  const self = typeof c.self === 'string' ? c.self : c.self && c.self.name;
  $('cluster-self').textContent = self ? `This node: ${self}` : 'Not in a cluster.';
  const body = clear($('cluster').tBodies[0]);
  for (const n of c.nodes || []) {
    body.append(el('tr', {},
      el('td', {}, n.name), el('td', { class: 'mono' }, n.address || ''),
      el('td', { class: `state state-${n.status}` }, n.status),
      el('td', {}, n.runtimes ?? ''), el('td', {}, n.workers ?? '')));
  }
  $('cluster').hidden = !(c.nodes && c.nodes.length);
}

// ---------------------------------------------------------------- health

const TREE = [
  ['manager_supervisor', [
    ['runtime_directory', [['runtime_connection', [['pending_request', []]]]]],
    ['caller_session', []],
    ['child_runtime', []],
    ['function_registry', [['worker_connection', [['invocation', []]]], ['trigger_binding', []], ['channel', []]]],
    ['cluster_node', []],
    ['cluster_gateway', [['remote_call', []]]],
  ]],
];

function renderTree(nodes, actors) {
  return nodes.map(([kind, children]) => el('li', {},
    el('span', { class: 'n', 'data-kind': kind }, actors[kind] ?? 0), kind,
    children.length ? el('ul', {}, renderTree(children, actors)) : null));
}

function chart(svg, series) {
  clear(svg);
  const W = 300, H = 80, n = state.samples.length;
  svg.append(svgEl('line', { x1: 0, y1: H - 1, x2: W, y2: H - 1, class: 'base' }));
  if (n === 0) return;
  const max = Math.max(1e-9, ...series.flatMap((s) => s.values.filter((v) => v !== null)));
  for (const s of series) {
    const pts = [];
    s.values.forEach((v, i) => {
      if (v === null) return;
      pts.push(`${(n === 1 ? W - 2 : (i / (n - 1)) * W).toFixed(1)},${(H - 2 - (v / max) * (H - 6)).toFixed(1)}`);
    });
    if (pts.length === 1) {
      const [x, y] = pts[0].split(',');
      svg.append(svgEl('circle', { cx: x, cy: y, r: 2, class: s.class }));
    } else {
      svg.append(svgEl('polyline', { points: pts.join(' '), class: s.class }));
    }
  }
}

function svgEl(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

function renderHealth() {
  const per = state.intervalMs / 1000;
  const s = state.samples;
  const calls = s.map((x) => x.calls / per);
  const errors = s.map((x) => x.errors / per);
  chart($('chart-calls'), [{ values: calls, class: 'line1' }]);
  chart($('chart-errors'), [{ values: errors, class: 'line2' }]);
  chart($('chart-latency'), [{ values: s.map((x) => x.p50), class: 'line1' },
    { values: s.map((x) => x.p99), class: 'line2' }]);
  const last = s[s.length - 1];
  const fmt = (v) => (v === null || v === undefined ? '–' : Number(v).toFixed(v < 10 ? 2 : 0));
  const peak = (xs) => fmt(Math.max(0, ...xs.filter((v) => v !== null)));
  $('now-calls').textContent = last ? `now ${fmt(calls[calls.length - 1])}/s · peak ${peak(calls)}/s` : 'no sample yet';
  $('now-errors').textContent = last ? `now ${fmt(errors[errors.length - 1])}/s · peak ${peak(errors)}/s` : '';
  $('now-latency').textContent = last
    ? `now p50 ${fmt(last.p50)} ms · p99 ${fmt(last.p99)} ms · peak p99 ${peak(s.map((x) => x.p99))} ms` : '';
  const span = s.length * per;
  const total = (k) => s.reduce((n, x) => n + x[k], 0);
  $('health-window').textContent = s.length
    ? `(last ${span < 120 ? `${span} s` : `${Math.round(span / 60)} min`}: ${total('calls')} calls, ` +
      `${total('errors')} errors; a sample every ${per} s)` : '';
  clear($('actor-tree')).append(...renderTree(TREE, last ? last.actors : {}));
}

// ---------------------------------------------------------------- actions

function renderRuntimeSelect() {
  const sel = $('runtime-select');
  const keep = sel.value;
  clear(sel).append(el('option', { value: '' }, 'most recent runtime'));
  for (const r of state.runtimes) {
    const id = r.qualifiedId || r.id;
    sel.append(el('option', { value: id }, r.name && r.name !== r.id ? `${id} (${r.name})` : id));
  }
  if (state.workers.length) sel.append(el('option', { value: 'iii' }, 'iii functions'));
  sel.value = [...sel.options].some((o) => o.value === keep) ? keep : '';
  if (!$('view-actions').hidden && state.catalogFor !== null && state.catalogFor !== sel.value)
    loadCatalog();
}

async function loadCatalog() {
  const runtimeId = $('runtime-select').value;
  state.catalogFor = runtimeId;
  $('catalog-error').textContent = '';
  try {
    const res = await link.request('listActions', runtimeId ? { runtimeId } : {});
    if (state.catalogFor !== runtimeId) return;
    state.actions = res.actions || {};
  } catch (e) {
    state.actions = {};
    $('catalog-error').textContent = errorText(e);
  }
  renderCatalog();
}

function renderCatalog() {
  const filter = $('action-filter').value.toLowerCase();
  const list = clear($('action-list'));
  for (const [key, a] of Object.entries(state.actions)) {
    const text = `${key} ${a.description || ''}`.toLowerCase();
    if (filter && !text.includes(filter)) continue;
    list.append(el('li', {}, el('button', {
      type: 'button', 'aria-current': key === state.selected ? 'true' : 'false',
      'data-key': key, onclick: () => selectAction(key),
    }, key, a.description ? el('small', {}, a.description) : null)));
  }
  if (state.selected && !state.actions[state.selected]) $('runner').hidden = true;
}

function selectAction(key) {
  state.selected = key;
  const a = state.actions[key];
  renderCatalog();
  $('runner').hidden = false;
  $('action-key').textContent = key;
  $('action-description').textContent = a.description || '';
  $('input-schema').textContent = a.inputSchema ? pretty(a.inputSchema) : 'none (any JSON)';
  $('output-schema').textContent = a.outputSchema ? pretty(a.outputSchema) : 'none (any JSON)';
  form = buildForm(a.inputSchema);
  const raw = !form;
  $('raw-toggle').checked = raw;
  $('raw-toggle').disabled = raw;
  $('raw-input').hidden = !raw;
  $('schema-form').hidden = raw;
  $('raw-input').value = '';
  resetOutput();
}

// The form built from an input schema: fields for what a form can say
// (strings, numbers, booleans, enums, nested objects); JSON boxes for the rest.
let form = null;

function resolve(schema, root, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 8) return schema;
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/')) {
    let target = root;
    for (const part of schema.$ref.slice(2).split('/')) target = target && target[part];
    return resolve(target, root, depth + 1);
  }
  return schema;
}

function typeOf(schema) {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) return 'enum';
  const t = Array.isArray(schema.type) ? schema.type.filter((x) => x !== 'null') : [schema.type];
  return t.length === 1 ? t[0] : undefined;
}

function buildForm(schema) {
  const root = schema;
  schema = resolve(schema, root);
  if (!schema || typeof schema !== 'object') return null;
  const box = clear($('schema-form'));
  box.append(el('legend', {}, 'Input'));
  const field = buildField(schema, root, 'input', 'input', true, 0);
  if (!field) return null;
  box.append(field.node);
  return field;
}

let fieldSeq = 0;

function buildField(schema, root, name, label, required, depth) {
  schema = resolve(schema, root);
  const type = typeOf(schema);
  const id = `f${++fieldSeq}`;
  const hint = schema && schema.description ? el('small', {}, schema.description) : null;
  const lab = el('label', { for: id }, label + (required ? ' *' : ''));
  if (type === 'object' && schema.properties && depth < 6) {
    const req = new Set(schema.required || []);
    const children = Object.entries(schema.properties).map(([k, s]) =>
      [k, buildField(s, root, k, k, req.has(k), depth + 1)]);
    const set = el('fieldset', {}, el('legend', {}, label), hint,
      children.map(([, f]) => f.node));
    return {
      node: depth === 0 ? el('div', {}, hint, children.map(([, f]) => f.node)) : set,
      read() {
        const out = {};
        for (const [k, f] of children) {
          const v = f.read();
          if (v !== undefined) out[k] = v;
        }
        return Object.keys(out).length || required ? out : undefined;
      },
      write(v) {
        for (const [k, f] of children) f.write(v && typeof v === 'object' ? v[k] : undefined);
      },
    };
  }
  let input;
  let read;
  let write;
  if (type === 'enum') {
    input = el('select', { id, name }, required ? null : el('option', { value: '' }, '–'),
      schema.enum.map((v, i) => el('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v))));
    read = () => (input.value === '' ? undefined : schema.enum[Number(input.value)]);
    write = (v) => {
      const i = schema.enum.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
      input.value = i < 0 ? '' : String(i);
    };
  } else if (type === 'boolean') {
    input = el('input', { id, name, type: 'checkbox' });
    read = () => input.checked;
    write = (v) => { input.checked = v === true; };
  } else if (type === 'number' || type === 'integer') {
    input = el('input', { id, name, type: 'number', step: type === 'integer' ? '1' : 'any',
      required, min: schema.minimum, max: schema.maximum });
    read = () => {
      if (input.value === '') return undefined;
      const v = Number(input.value);
      if (!Number.isFinite(v)) throw new Error(`${label}: not a number`);
      return v;
    };
    write = (v) => { input.value = typeof v === 'number' ? String(v) : ''; };
  } else if (type === 'string') {
    input = el('input', { id, name, type: 'text', required,
      placeholder: schema.format || schema.pattern || '' });
    read = () => (input.value === '' && !required ? undefined : input.value);
    write = (v) => { input.value = typeof v === 'string' ? v : ''; };
  } else {
    // Arrays, unions, untyped: JSON.
    input = el('textarea', { id, name, rows: 3, spellcheck: 'false', placeholder: 'JSON' });
    read = () => {
      if (input.value.trim() === '') return undefined;
      try { return JSON.parse(input.value); } catch (e) {
        throw new Error(`${label}: not valid JSON (${e.message})`);
      }
    };
    write = (v) => { input.value = v === undefined ? '' : JSON.stringify(v); };
  }
  return { node: el('div', { class: 'field' }, lab, input, hint), read, write };
}

function readInput() {
  if ($('raw-toggle').checked) {
    const text = $('raw-input').value.trim();
    if (text === '') return undefined;
    try { return JSON.parse(text); } catch (e) {
      throw new Error(`The input is not valid JSON: ${e.message}`);
    }
  }
  return form ? form.read() : undefined;
}

function resetOutput() {
  $('trace-id').textContent = '–';
  $('trace-link').hidden = true;
  clear($('chunks'));
  $('result').textContent = '';
  $('run-error').textContent = '';
}

async function runSelected() {
  const key = state.selected;
  const a = state.actions[key];
  let input;
  try { input = readInput(); } catch (e) {
    $('run-error').textContent = e.message;
    return;
  }
  resetOutput();
  const bidi = !!(a.metadata && a.metadata.bidi === true);
  const runtimeId = state.catalogFor || undefined;
  const params = { key, stream: true };
  if (input !== undefined) params.input = input;
  if (runtimeId) params.runtimeId = runtimeId;
  if (bidi) params.streamInput = true;
  const run = {
    runtimeId,
    onTrace(traceId) {
      run.traceId = traceId;
      $('trace-id').textContent = traceId;
      $('cancel-button').disabled = false;
    },
    onChunk(chunk) {
      $('chunks').append(el('li', {}, JSON.stringify(chunk)));
    },
  };
  state.run = run;
  $('run-button').disabled = true;
  $('bidi-form').hidden = !bidi;
  $('bidi-end').disabled = false;
  $('bidi-send').disabled = false;
  try {
    const res = await link.request('runAction', params, run);
    if (res && res.telemetry && res.telemetry.traceId) $('trace-id').textContent = res.telemetry.traceId;
    showTraceLink($('trace-id').textContent);
    $('result').textContent = pretty(res ? res.result : undefined);
  } catch (e) {
    $('run-error').textContent = errorText(e);
    if (run.traceId) showTraceLink(run.traceId);
  } finally {
    if (state.run === run) state.run = null;
    $('run-button').disabled = false;
    $('cancel-button').disabled = true;
    $('bidi-form').hidden = true;
  }
}

async function cancelRun() {
  const run = state.run;
  if (!run || !run.traceId) return;
  $('cancel-button').disabled = true;
  try {
    await link.request('cancelAction', run.runtimeId
      ? { traceId: run.traceId, runtimeId: run.runtimeId } : { traceId: run.traceId });
  } catch (e) {
    $('run-error').textContent = `Cancel failed: ${errorText(e)}`;
  }
}

function sendBidi(ev) {
  ev.preventDefault();
  const run = state.run;
  if (!run) return;
  const text = $('bidi-input').value;
  let chunk;
  try { chunk = JSON.parse(text); } catch { chunk = text; } // plain text goes as a string
  link.notify('sendInputStreamChunk', { requestId: run.id, chunk });
  $('bidi-input').value = '';
}

function endBidi() {
  const run = state.run;
  if (!run) return;
  link.notify('endInputStream', { requestId: run.id });
  $('bidi-send').disabled = true;
  $('bidi-end').disabled = true;
}

// ---------------------------------------------------------------- traces

// The manager's trace store (docs/API.md, "Traces"), over plain fetch.
async function getJson(url) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  const res = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  if (!res.ok) throw (body && body.error) || { message: `HTTP ${res.status}` };
  return body;
}

const traceList = { traces: [], next: undefined };

function traceRoot(t) {
  const spans = Object.values(t.spans || {});
  return spans.find((s) => !s.parentSpanId) || spans[0];
}

function ms(start, end) {
  if (!(end > 0) || !(start > 0)) return '…';
  const d = end - start;
  return d < 10 ? `${d.toFixed(2)} ms` : d < 10000 ? `${Math.round(d)} ms` : `${(d / 1000).toFixed(1)} s`;
}

async function loadTraces(more = false) {
  $('traces-error').textContent = '';
  try {
    const q = more && traceList.next ? `&continuationToken=${encodeURIComponent(traceList.next)}` : '';
    const page = await getJson(`/api/traces?limit=20${q}`);
    traceList.traces = more ? traceList.traces.concat(page.traces) : page.traces;
    traceList.next = page.continuationToken;
  } catch (e) {
    traceList.traces = [];
    traceList.next = undefined;
    $('traces-error').textContent = errorText(e);
  }
  const body = clear($('traces').tBodies[0]);
  for (const t of traceList.traces) {
    const root = traceRoot(t) || {};
    const state = root.attributes && root.attributes['genkit:state'];
    body.append(el('tr', {},
      el('td', {}, time(t.startTime || root.startTime)),
      el('td', {}, t.displayName || root.displayName || ''),
      el('td', {}, ms(t.startTime || root.startTime, t.endTime || root.endTime)),
      el('td', { class: `state state-${state === 'error' ? 'failed' : 'ready'}` }, state || ''),
      el('td', {}, el('button', { type: 'button', class: 'link-button mono', onclick: () => openTrace(t.traceId) }, t.traceId))));
  }
  $('traces-empty').hidden = traceList.traces.length > 0 || $('traces-error').textContent !== '';
  $('traces-more').hidden = !traceList.next;
}

/** Shows one trace as a waterfall; the spans arrive as the runtime exports them, so it retries a while. */
async function openTrace(traceId, attempts = 1) {
  showView('traces');
  $('trace-detail').hidden = false;
  $('span-detail').hidden = true;
  $('trace-title').textContent = `Trace ${traceId}`;
  const list = clear($('waterfall'));
  let t;
  for (let i = 0; i < attempts; i++) {
    try {
      t = await getJson(`/api/traces/${encodeURIComponent(traceId)}`);
      if (Object.values(t.spans).some((s) => !s.parentSpanId && s.endTime > 0)) break;
    } catch (e) {
      if (i === attempts - 1) {
        $('traces-error').textContent = errorText(e);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  if (!t) return;
  const spans = Object.values(t.spans).sort((a, b) => a.startTime - b.startTime);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const depth = (s) => { let d = 0; for (let p = s; p.parentSpanId && byId.has(p.parentSpanId) && d < 32; p = byId.get(p.parentSpanId)) d++; return d; };
  const t0 = Math.min(...spans.map((s) => s.startTime));
  const t1 = Math.max(...spans.map((s) => (s.endTime > 0 ? s.endTime : s.startTime)));
  const span = Math.max(t1 - t0, 1e-6);
  const root = traceRoot(t);
  $('trace-title').textContent = `${t.displayName || (root && root.displayName) || 'Trace'} · ${traceId}`;
  for (const s of spans) {
    const left = ((s.startTime - t0) / span) * 100;
    const width = s.endTime > 0 ? Math.max(((s.endTime - s.startTime) / span) * 100, 0.5) : 0.5;
    const failed = (s.status && s.status.code === 2) || (s.attributes && s.attributes['genkit:state'] === 'error');
    const bar = el('span', { class: failed ? 'error' : '' });
    bar.style.left = `${left}%`;
    bar.style.width = `${width}%`;
    const label = el('span', {}, s.displayName);
    label.style.paddingLeft = `${depth(s)}rem`;
    list.append(el('li', {}, el('button', {
      type: 'button', 'data-span': s.spanId, 'aria-current': 'false',
      onclick: (ev) => showSpan(s, ev.currentTarget),
    }, label, el('span', { class: 'bar' }, bar), el('span', { class: 'dur' }, ms(s.startTime, s.endTime)))));
  }
  if (root) showSpan(root, list.querySelector(`[data-span="${CSS.escape(root.spanId)}"]`));
}

function showSpan(s, button) {
  for (const b of $('waterfall').querySelectorAll('button')) b.setAttribute('aria-current', String(b === button));
  const a = s.attributes || {};
  const show = (v) => {
    if (v === undefined) return '–';
    try { return pretty(JSON.parse(v)); } catch { return String(v); }
  };
  $('span-detail').hidden = false;
  $('span-title').textContent = `${s.displayName} (${a['genkit:type'] || s.spanKind})`;
  $('span-input').textContent = show(a['genkit:input']);
  $('span-output').textContent = show(a['genkit:output']);
  $('span-attributes').textContent = pretty(a);
}

function showTraceLink(traceId) {
  if (!/^[0-9A-Za-z._-]{1,128}$/.test(traceId)) return;
  const a = $('trace-link');
  a.hidden = false;
  a.href = `#traces/${traceId}`;
  a.onclick = (ev) => { ev.preventDefault(); openTrace(traceId, 20); };
}

// ---------------------------------------------------------------- wiring

function showView(name, refresh = true) {
  if (name === 'traces' && refresh) loadTraces();
  for (const b of document.querySelectorAll('.tab'))
    b.setAttribute('aria-pressed', String(b.dataset.view === name));
  for (const v of document.querySelectorAll('.view')) v.hidden = v.id !== `view-${name}`;
  // Once connected, a catalog that is not the selected runtime's is reloaded.
  if (name === 'actions' && link.ws && link.ws.readyState === WebSocket.OPEN &&
      state.catalogFor !== $('runtime-select').value) loadCatalog();
  if (location.hash !== `#${name}`) history.replaceState(null, '', `#${name}`);
}

function onUpdate(topic, data) {
  if (topic === 'runtimes') {
    state.runtimes = Array.isArray(data) ? data : [];
    renderRuntimes();
  } else if (topic === 'workers') {
    state.workers = (data && data.workers) || [];
    renderWorkers();
  } else if (topic === 'services') {
    state.services = Array.isArray(data) ? data : [];
    renderServices();
  } else if (topic === 'cluster') {
    state.cluster = data || {};
    renderCluster();
  } else if (topic === 'health') {
    state.intervalMs = data.intervalMs || 2000;
    if (data.reset) state.samples = [];
    state.samples.push(...(data.samples || []));
    if (state.samples.length > 150) state.samples.splice(0, state.samples.length - 150);
    renderHealth();
  }
}

async function start() {
  // With a token configured, /api/* answers 401 until the page has it.
  const token = sessionStorage.getItem(TOKEN_KEY);
  let res;
  try {
    res = await fetch('/api/__health', token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  } catch {
    $('link').textContent = 'cannot reach the manager; retrying…';
    setTimeout(start, 2000);
    return;
  }
  if (res.status === 401) {
    $('token-form').hidden = false;
    $('token-error').textContent = token ? 'That token was refused.' : '';
    $('link').textContent = 'waiting for the token';
    $('token-input').focus();
    return;
  }
  $('token-form').hidden = true;
  link.onUpdate = onUpdate;
  link.onState = (text, cls) => {
    $('link').textContent = text;
    $('link').className = `link ${cls}`;
  };
  link.onOpen = async () => {
    try {
      await link.request('watch', { topics: ['runtimes', 'workers', 'services', 'cluster', 'health'] });
    } catch (e) {
      $('link').textContent = `live view refused: ${errorText(e)}`;
    }
    state.catalogFor = null;
    if (!$('view-actions').hidden) loadCatalog();
  };
  link.connect();
}

$('token-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('token-input').value.trim());
  $('token-input').value = '';
  start();
});
for (const b of document.querySelectorAll('.tab'))
  b.addEventListener('click', () => showView(b.dataset.view));
$('runtime-select').addEventListener('change', loadCatalog);
$('traces-refresh').addEventListener('click', () => loadTraces());
$('traces-more').addEventListener('click', () => loadTraces(true));
$('action-filter').addEventListener('input', renderCatalog);
$('run-form').addEventListener('submit', (ev) => { ev.preventDefault(); runSelected(); });
$('cancel-button').addEventListener('click', cancelRun);
$('bidi-form').addEventListener('submit', sendBidi);
$('bidi-end').addEventListener('click', endBidi);
$('raw-toggle').addEventListener('change', () => {
  const raw = $('raw-toggle').checked;
  if (raw) {
    try { $('raw-input').value = pretty(form ? form.read() : undefined); } catch { /* keep it */ }
  } else if (form) {
    try { form.write(JSON.parse($('raw-input').value || 'null')); } catch { /* keep the form */ }
  }
  $('raw-input').hidden = !raw;
  $('schema-form').hidden = raw;
});

const initial = location.hash.slice(1);
if (initial.startsWith('traces/')) openTrace(initial.slice(7), 20);
else showView(['overview', 'actions', 'traces', 'health'].includes(initial) ? initial : 'overview');
renderHealth();
start();
