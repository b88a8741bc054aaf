// Small async utilities of the interop tests: deadlines, bounded polling
// and a queue consumed with deadlines.

/** Rejects with a descriptive error if `promise` does not settle in time. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));
// For races against an event: must not keep the test process alive.
export const grace = (ms) => new Promise((r) => setTimeout(r, ms).unref());

/**
 * Calls `probe` until `done(value)` holds or the deadline passes; returns the
 * last value. A bounded poll loop, for state that has no event to wait on.
 * Errors from `probe` are retried unless they are marked `fatal`.
 */
export async function pollUntil(probe, done, { timeoutMs = 5000, intervalMs = 25, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  let lastError;
  for (;;) {
    try {
      last = await probe();
      lastError = undefined;
      if (done(last)) return last;
    } catch (e) {
      if (e.fatal) throw e;
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const seen = lastError ? `error: ${lastError.message}` : `last value: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${seen})`);
    }
    await delay(intervalMs);
  }
}

/** A queue consumed with deadlines: next() resolves {value, done} or rejects on timeout/failure. */
export class AsyncQueue {
  #items = [];
  #waiters = [];
  #ended = false;
  #error = null;

  push(value) {
    const w = this.#waiters.shift();
    if (w) w.resolve({ value, done: false });
    else this.#items.push(value);
  }

  end(error = null) {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    for (const w of this.#waiters.splice(0)) {
      if (error) w.reject(error);
      else w.resolve({ value: undefined, done: true });
    }
  }

  get ended() {
    return this.#ended;
  }

  next(timeoutMs = 5000, what = 'next item') {
    if (this.#items.length) return Promise.resolve({ value: this.#items.shift(), done: false });
    if (this.#ended) {
      return this.#error ? Promise.reject(this.#error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Everything up to the end of the queue; each item must arrive within `timeoutMs`. */
  async drain(timeoutMs = 5000, what = 'end of stream') {
    const out = [];
    for (;;) {
      const { value, done } = await this.next(timeoutMs, what);
      if (done) return out;
      out.push(value);
    }
  }
}
