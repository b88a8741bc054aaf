// The page's one WebSocket to /api/ws (JSON-RPC 2.0): requests, runs and the
// live feed's `update` notifications; it reconnects with a backoff.
import { TOKEN_KEY } from './dom.js';

// ---------------------------------------------------------------- the link

export class Link {
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

