// What every part of the dashboard shares: building the page from data (as
// text nodes only: nothing a peer sent becomes markup) and error wording.

export const STATUS = ['OK', 'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED',
  'NOT_FOUND', 'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION', 'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE',
  'DATA_LOSS', 'UNAUTHENTICATED'];
export const TOKEN_KEY = 'actor-host-token';

export const $ = (id) => document.getElementById(id);

/** Builds an element; strings among the children become text nodes. */
export function el(tag, attrs = {}, ...children) {
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

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

export function pretty(value) {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

export function time(ms) {
  if (!ms) return '–';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '–' : d.toLocaleTimeString();
}

/** A JSON-RPC error object as a person reads it: "STATUS: message". */
export function errorText(e) {
  if (!e) return 'Unknown error';
  if (typeof e === 'string') return e;
  const code = e.data && typeof e.data.code === 'number' ? e.data.code : undefined;
  const status = code !== undefined && STATUS[code] ? STATUS[code] : undefined;
  let message = (typeof e.message === 'string' && e.message) ||
    (e.data && typeof e.data.message === 'string' && e.data.message) || 'Unknown error';
  if (status && !message.startsWith(status)) message = `${status}: ${message}`;
  return message;
}

export function svgEl(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}
