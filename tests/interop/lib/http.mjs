// HTTP clients of the interop tests: whole responses and NDJSON streams,
// one connection per request, tracked so cleanup() ends what is left.
import http from 'node:http';
import { tracked } from './processes.mjs';
import { AsyncQueue } from './wait.mjs';

export class HttpResponse {
  constructor(status, headers, text) {
    this.status = status;
    this.headers = headers;
    this.text = text;
  }
  get json() {
    try {
      return JSON.parse(this.text);
    } catch {
      throw new Error(`HTTP ${this.status} body is not JSON: ${JSON.stringify(this.text.slice(0, 500))}`);
    }
  }
  get traceIdHeader() {
    return this.headers['x-genkit-trace-id'];
  }
}

function encodeBody(body) {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  return JSON.stringify(body);
}

// One connection per request (agent: false): no keep-alive sockets survive a test.
function startRequest(url, { method = 'GET', body, headers = {} }) {
  const data = encodeBody(body);
  const req = http.request(url, {
    method,
    agent: false,
    headers: {
      ...(data !== undefined
        ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
        : {}),
      ...headers,
    },
  });
  tracked.requests.add(req);
  req.once('close', () => tracked.requests.delete(req));
  // Errors after a response arrived (e.g. EPIPE when the server answers 413
  // before reading the whole body) do not matter; earlier ones reject below.
  req.on('error', () => {});
  req.end(data);
  return req;
}

/** A plain request; resolves with the whole response. */
export function httpRequest(url, { method = 'GET', body, headers, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = startRequest(url, { method, body, headers });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${url}: no complete response within ${timeoutMs} ms`));
    }, timeoutMs);
    req.once('error', (e) => (clearTimeout(timer), reject(new Error(`${method} ${url}: ${e.message}`))));
    req.once('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.once('end', () => {
        clearTimeout(timer);
        resolve(new HttpResponse(res.statusCode, res.headers, Buffer.concat(chunks).toString('utf8')));
      });
      res.once('error', (e) => (clearTimeout(timer), reject(new Error(`${method} ${url}: response: ${e.message}`))));
      res.once('close', () => {
        if (res.complete) return;
        clearTimeout(timer);
        reject(new Error(`${method} ${url}: connection closed before the end of the response`));
      });
    });
  });
}

/**
 * A streaming POST whose response body is NDJSON. Resolves once the response
 * head is in: {status, headers, traceId, lines: AsyncQueue of parsed lines,
 * abort()}. A response that is not NDJSON (an error) is read whole into `text`.
 */
export function ndjsonStream(url, body, { timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = startRequest(url, { method: 'POST', body });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`POST ${url}: no response head within ${timeoutMs} ms`));
    }, timeoutMs);
    req.once('error', (e) => (clearTimeout(timer), reject(new Error(`POST ${url}: ${e.message}`))));
    req.once('response', (res) => {
      clearTimeout(timer);
      const lines = new AsyncQueue();
      let partial = '';
      const emit = (line) => {
        if (!line.trim()) return;
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.end(new Error(`stream line is not JSON: ${JSON.stringify(line.slice(0, 300))}`));
        }
      };
      res.setEncoding('utf8');
      res.on('data', (text) => {
        const parts = (partial + text).split('\n');
        partial = parts.pop();
        parts.forEach(emit);
      });
      res.once('end', () => {
        emit(partial);
        lines.end();
      });
      res.once('error', (e) => lines.end(new Error(`stream broke: ${e.message}`)));
      res.once('close', () => res.complete || lines.end(new Error('stream closed before its end')));
      resolve({
        status: res.statusCode,
        headers: res.headers,
        traceId: res.headers['x-genkit-trace-id'],
        lines,
        abort: () => req.destroy(),
      });
    });
  });
}
