// The traces view: the manager's trace store (docs/API.md, "Traces") over fetch.
import { $, clear, el, errorText, pretty, time, TOKEN_KEY } from './dom.js';

// The app's view switch, handed in by app.js (which imports this module).
let showView = () => {};
export function setViewSwitcher(fn) {
  showView = fn;
}


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

export async function loadTraces(more = false) {
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
export async function openTrace(traceId, attempts = 1) {
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

export function showTraceLink(traceId) {
  if (!/^[0-9A-Za-z._-]{1,128}$/.test(traceId)) return;
  const a = $('trace-link');
  a.hidden = false;
  a.href = `#traces/${traceId}`;
  a.onclick = (ev) => { ev.preventDefault(); openTrace(traceId, 20); };
}
