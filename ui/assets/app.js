// The actor-host dashboard. One WebSocket to /api/ws (JSON-RPC 2.0, docs/API.md)
// carries both the live feed (`watch`, then `update` notifications) and the
// runs started from the page. Everything a peer sent (ids, names, schemas,
// results) reaches the page as text nodes, never as markup.

import { $, clear, el, errorText, pretty, svgEl, time, TOKEN_KEY } from './dom.js';
import { Link } from './link.js';
import { buildForm } from './schema_form.js';
import { loadTraces, openTrace, setViewSwitcher, showTraceLink } from './traces.js';

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
    ['cluster_gateway', []],
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

// The form built from the selected action's input schema (schema_form.js), or null.
let form = null;

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

setViewSwitcher(showView);
const initial = location.hash.slice(1);
if (initial.startsWith('traces/')) openTrace(initial.slice(7), 20);
else showView(['overview', 'actions', 'traces', 'health'].includes(initial) ? initial : 'overview');
renderHealth();
start();
