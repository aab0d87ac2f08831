import { createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRecordedRequest } from './recorded-request.ts';
import { answer, sendJson } from './protocol-replies.ts';
import type { FakeModelServer, FakeProtocol, RecordedRequest, Step, StepHandler } from './fake-model-types.ts';
import { createPromptCache } from './prompt-cache.ts';
import { requestedSchema, sampleOf } from './structured-output.ts';
import { createRateLimit } from './rate-limit.ts';

export type { FakeModelServer, FakeReply, RecordedRequest, Step, StepHandler } from './fake-model-types.ts';

const ROUTES: Record<string, FakeProtocol> = {
  '/v1/messages': 'anthropic',
  '/messages': 'anthropic',
  '/v1/chat/completions': 'openai',
  '/chat/completions': 'openai',
};

const DEFAULT_STEP: Step = { reply: { text: 'fake answer' } };
const NO_SCRIPT_STEP: Step = { status: 500, message: 'the fake model server has no factory script queued (enqueueScripts)' };
const fenced = (source: string) => `Here is the script.\n\n\`\`\`\n${source.trimEnd()}\n\`\`\`\n`;

/** Starts a real HTTP server answering Anthropic Messages and OpenAI Chat Completions requests from a script. */
export async function startFakeModelServer(opts: { port?: number; host?: string } = {}): Promise<FakeModelServer> {
  const host = opts.host ?? '127.0.0.1';
  const queue: Step[] = [];
  const scripts: Step[] = [];
  const waiters = new Set<{ condition: () => boolean; resolve: () => void }>();
  const timers = new Set<NodeJS.Timeout>();
  let handler: StepHandler | undefined;
  let idCounter = 0;
  const nextId = (): number => ++idCounter;
  const promptCache = createPromptCache();
  const rateLimit = createRateLimit();

  const notify = (): void => {
    for (const waiter of waiters) {
      if (!holds(waiter.condition)) continue;
      waiters.delete(waiter);
      waiter.resolve();
    }
  };

  const httpServer = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const protocol = ROUTES[path];
    if (req.method !== 'POST' || !protocol) {
      sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'not_found' } });
      return;
    }
    server.inFlight++;
    server.maxInFlight = Math.max(server.maxInFlight, server.inFlight);
    let record: RecordedRequest | undefined;
    const settle = (): void => {
      if (!record || !res.closed) return;
      record.finishedAt = Date.now();
      record.aborted = !res.writableFinished;
    };
    res.on('close', () => {
      server.inFlight--;
      settle();
      notify();
    });
    void readBody(req).then(async (raw) => {
      record = createRecordedRequest(protocol, path, req.headers, parseJson(raw));
      if (record.body !== undefined) record.cache = promptCache.observe(protocol, record.body);
      server.requests.push(record);
      // The client may have hung up while still sending the body.
      settle();
      notify();
      if (res.closed) return;
      const refused = record.body === undefined ? undefined : requestedSchema(protocol, record.body);
      const retryAfterS = record.body === undefined ? undefined : rateLimit.take();
      if (retryAfterS !== undefined) server.rateLimited++;
      const step =
        record.body === undefined
          ? badJsonStep()
          : retryAfterS !== undefined
            ? rateLimitedStep(retryAfterS)
            : refused && 'error' in refused
              ? { status: 400, message: refused.error }
              : record.factory
                ? (scripts.shift() ?? NO_SCRIPT_STEP)
                : (queue.shift() ?? (await nextFromHandler(record)));
      if ('hang' in step) return;
      if ('reset' in step) return void res.socket?.destroy();
      if (step.delayMs) await sleep(step.delayMs, timers);
      if (res.destroyed) return;
      await answer(res, record, step, nextId, { chunkDelayMs: server.chunkDelayMs, sleep: (ms) => sleep(ms, timers) });
    });
  });

  async function nextFromHandler(record: RecordedRequest): Promise<Step> {
    // Structured outputs honoured: unscripted, the answer matches the schema the request carried.
    if (!handler) return record.outputSchema ? { reply: { json: sampleOf(record.outputSchema) } } : DEFAULT_STEP;
    try {
      return await handler(record);
    } catch (error) {
      return { status: 500, message: `fake model handler threw: ${(error as Error).message}` };
    }
  }

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (httpServer.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  const server: FakeModelServer = {
    url,
    anthropicBaseUrl: url,
    openaiBaseUrl: `${url}/v1`,
    port,
    requests: [],
    inFlight: 0,
    maxInFlight: 0,
    chunkDelayMs: 0,
    rateLimited: 0,
    limitRequestsPerMinute: (limit) => rateLimit.set(limit),
    enqueue: (...steps) => void queue.push(...steps),
    enqueueScripts: (...steps) => void scripts.push(...steps.map((s) => (typeof s === 'string' ? { reply: { text: fenced(s) } } : s))),
    setHandler: (next) => void (handler = next),
    waitFor: (condition) =>
      holds(condition) ? Promise.resolve() : new Promise<void>((resolve) => void waiters.add({ condition, resolve })),
    reset: () => {
      queue.length = 0;
      scripts.length = 0;
      handler = undefined;
      server.requests.length = 0;
      server.maxInFlight = server.inFlight;
      server.rateLimited = 0;
      rateLimit.set(undefined);
      idCounter = 0;
      promptCache.reset();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      }),
  };
  return server;
}

// A condition that throws (e.g. reads a request not yet received) simply does not hold yet.
function holds(condition: () => boolean): boolean {
  try {
    return condition();
  } catch {
    return false;
  }
}

function rateLimitedStep(retryAfterS: number): Step {
  return { status: 429, headers: { 'retry-after': String(retryAfterS) }, message: 'requests per minute exceeded (fake model server)' };
}

function badJsonStep(): Step {
  return { status: 400, message: 'request body is not valid JSON' };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    // An aborted upload still resolves so the request is recorded (and seen as aborted).
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function sleep(ms: number, timers: Set<NodeJS.Timeout>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      resolve();
    }, ms);
    timers.add(timer);
  });
}
