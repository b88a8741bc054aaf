// Test peer for the actor-host interop tests: a verbatim copy of the shared
// harness ../shared/peers/genkit/runtime.mjs (only this note added). Keep it in
// sync with that file; the specs and baseline numbers were taken with it.
//
// Real Genkit JS runtime (genkit 1.42.0) exposing a set of test actions over
// the Reflection V2 protocol (it is a WebSocket *client* of the manager).
//
// Required environment (this is what `genkit start --experimental-reflection-v2`
// injects into the child process):
//   GENKIT_ENV=dev                          reflection is only started in dev
//   GENKIT_REFLECTION_V2_SERVER=ws://host:port   manager URL (V2 instead of V1 HTTP)
// Optional:
//   GENKIT_RUNTIME_ID=<id>                  id sent in `register` (default: pid)
//   GENKIT_TELEMETRY_SERVER=<url>           overrides telemetryServerUrl from register
//   HARNESS_NAME=<name>                     display name sent in `register`
//
// If GENKIT_ENV is not set the script sets it to 'dev' itself (it must be set
// before genkit() is constructed).
if (!process.env.GENKIT_ENV) process.env.GENKIT_ENV = 'dev';
if (!process.env.GENKIT_REFLECTION_V2_SERVER) {
  console.error(
    'runtime.mjs: GENKIT_REFLECTION_V2_SERVER is not set; genkit would start the V1 HTTP reflection server instead.'
  );
}

// Dynamic imports so the env above is set before genkit's modules evaluate
// (static ESM imports would be hoisted above it).
const { genkit, z, GenkitError, generateMiddleware } = await import('genkit');
const { defineBidiAction } = await import('@genkit-ai/core');

// A middleware value so that listValues({type:'middleware'}) returns something.
const tagMiddleware = generateMiddleware(
  {
    name: 'harnessTag',
    description: 'Harness middleware (does nothing).',
    configSchema: z.object({ tag: z.string().optional() }),
    metadata: { harness: true },
  },
  () => ({})
);

const ai = genkit({
  name: process.env.HARNESS_NAME || undefined,
  // String model ref: registered as value type 'defaultModel' (no plugin needed).
  model: 'harness/fake-model',
  plugins: [tagMiddleware.plugin()],
  promptDir: null,
});

// 1. echo: returns its input unchanged (no schemas: any JSON).
ai.defineFlow('echo', async (input) => input);

// 1b. getOrder: an echo its metadata declares safe to run twice (the
// manager's retry of idempotent actions, docs/API.md).
ai.defineFlow({ name: 'getOrder', metadata: { retry: 'idempotent' } }, async (input) => input);

// 2. streamCount: streams n chunks {i}, returns a summary.
ai.defineFlow(
  {
    name: 'streamCount',
    inputSchema: z.object({
      n: z.number().int().min(0),
      delayMs: z.number().min(0).optional(),
      yieldEvery: z.number().int().min(1).optional(),
    }),
    streamSchema: z.object({ i: z.number() }),
    outputSchema: z.object({ count: z.number(), sum: z.number() }),
  },
  async ({ n, delayMs, yieldEvery }, { sendChunk, abortSignal }) => {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      if (abortSignal.aborted) throw abortSignal.reason;
      sendChunk({ i });
      sum += i;
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      else if (yieldEvery && (i + 1) % yieldEvery === 0)
        await new Promise((r) => setImmediate(r));
    }
    return { count: n, sum };
  }
);

// 3. slow: waits `ms`, honoring the abort signal (cancelAction).
ai.defineFlow(
  {
    name: 'slow',
    inputSchema: z.object({ ms: z.number().min(0) }),
    outputSchema: z.object({ waitedMs: z.number() }),
  },
  async ({ ms }, { abortSignal }) => {
    const t0 = Date.now();
    await new Promise((resolve, reject) => {
      if (abortSignal.aborted) return reject(abortSignal.reason);
      const t = setTimeout(resolve, ms);
      abortSignal.addEventListener(
        'abort',
        () => {
          clearTimeout(t);
          // abortSignal.reason is a DOMException named 'AbortError', which the
          // reflection server maps to status CANCELLED (1).
          reject(abortSignal.reason);
        },
        { once: true }
      );
    });
    return { waitedMs: Date.now() - t0 };
  }
);

// 4. fail: throws. With {status} throws a GenkitError carrying that status
// name (mapped to a numeric StatusCodes value), otherwise a plain Error
// (mapped to INTERNAL = 13).
ai.defineFlow('fail', async (input) => {
  if (input && input.status) {
    throw new GenkitError({
      status: input.status,
      message: input.message || 'harness failure with status',
    });
  }
  throw new Error((input && input.message) || 'boom: harness failure');
});

// 5. Non-trivial input/output schemas.
const Address = z.object({
  street: z.string(),
  city: z.string(),
  zip: z.string().regex(/^[0-9]{5}$/).describe('5-digit ZIP'),
});
const OrderInput = z.object({
  customer: z.object({
    name: z.string().min(1),
    email: z.string().email().optional(),
    address: Address,
  }),
  items: z
    .array(
      z.object({
        sku: z.string(),
        qty: z.number().int().positive(),
        unitPrice: z.number().nonnegative(),
      })
    )
    .min(1),
  priority: z.enum(['low', 'normal', 'high']).default('normal'),
  tags: z.array(z.string()).optional(),
  note: z.string().nullable().optional(),
});
const OrderOutput = z.object({
  orderId: z.string(),
  total: z.number(),
  itemCount: z.number().int(),
  priority: z.enum(['low', 'normal', 'high']),
  shipTo: z.string(),
});
ai.defineFlow(
  {
    name: 'createOrder',
    inputSchema: OrderInput,
    outputSchema: OrderOutput,
    metadata: { category: 'harness', version: 2 },
  },
  async (order) => {
    const total = order.items.reduce((s, it) => s + it.qty * it.unitPrice, 0);
    return {
      orderId: `ord-${order.customer.name.toLowerCase()}-${order.items.length}`,
      total: Math.round(total * 100) / 100,
      itemCount: order.items.reduce((s, it) => s + it.qty, 0),
      // Genkit validates inputs against the *JSON schema* (ajv), not by zod
      // parsing, so zod defaults are NOT applied to the input we receive.
      priority: order.priority ?? 'normal',
      shipTo: `${order.customer.address.city} ${order.customer.address.zip}`,
    };
  }
);

// 6. context / telemetryLabels echo.
ai.defineFlow('whoami', async (input, { context }) => ({
  input: input ?? null,
  context: context ?? null,
}));

// 7. Bidirectional (input-streaming) flow using the flow side channel's
// inputStream. Over Reflection V2 this is driven by runAction with
// streamInput:true + sendInputStreamChunk / endInputStream notifications.
ai.defineFlow(
  {
    name: 'chat',
    inputSchema: z.object({ text: z.string() }),
    streamSchema: z.object({ reply: z.string(), turn: z.number() }),
    outputSchema: z.object({ turns: z.number(), transcript: z.array(z.string()) }),
  },
  async (_input, { inputStream, sendChunk }) => {
    const transcript = [];
    for await (const msg of inputStream) {
      transcript.push(msg.text);
      sendChunk({ reply: msg.text.toUpperCase(), turn: transcript.length });
    }
    return { turns: transcript.length, transcript };
  }
);

// 8. A "real" bidi action (core defineBidiAction): metadata gets bidi:true and
// the body is an async generator; yielded values become stream chunks.
defineBidiAction(
  ai.registry,
  {
    actionType: 'flow',
    name: 'bidiSum',
    inputSchema: z.number(),
    outputSchema: z.object({ total: z.number(), count: z.number() }),
    streamSchema: z.object({ runningTotal: z.number() }),
  },
  async function* ({ inputStream }) {
    let total = 0;
    let count = 0;
    for await (const x of inputStream) {
      total += x;
      count++;
      yield { runningTotal: total };
    }
    return { total, count };
  }
);

// 9. A tool, to show a non-flow action key (/tool/add).
ai.defineTool(
  {
    name: 'add',
    description: 'Adds two numbers.',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    outputSchema: z.number(),
  },
  async ({ a, b }) => a + b
);

const shutdown = async () => {
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
