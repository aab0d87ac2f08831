/** What the client saw during one scenario: 5xx answers (of which 503 "unavailable") and requests that got no answer in time. */
export type Tally = {
  fiveXx: number;
  unavailable: number;
  noAnswer: number;
  slowest: number;
  /** The first few 5xx other than 503. */ others: string[];
};

/** An HTTP client for the API that counts what a user would complain about: 5xx answers and hung requests. */
export function createChaosClient(baseUrl: string, timeoutMs = 30_000) {
  let tally: Tally = { fiveXx: 0, unavailable: 0, noAnswer: 0, slowest: 0, others: [] };
  async function request(method: string, path: string, o: { key: string; body?: unknown; headers?: Record<string, string> }) {
    const started = Date.now();
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${o.key}`,
          ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
        ...(o.body !== undefined ? { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      // A readiness probe answering 503 while a dependency is away is doing its job: not counted.
      if (res.status >= 500 && path !== '/readyz') {
        tally.fiveXx++;
        if (res.status === 503) tally.unavailable++;
        else if (tally.others.length < 3) tally.others.push(`${res.status} ${method} ${path.split('?')[0]}: ${text.slice(0, 120)}`);
      }
      let body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const retryAfterS = Number(res.headers.get('retry-after')) || undefined;
      return { status: res.status, body, ms: Date.now() - started, retryAfterS };
    } catch {
      tally.noAnswer++;
      return { status: 0, body: undefined, ms: Date.now() - started };
    } finally {
      tally.slowest = Math.max(tally.slowest, Date.now() - started);
    }
  }
  return {
    request,
    /** Starts counting afresh; returns what was counted so far. */
    resetTally(): Tally {
      const t = tally;
      tally = { fiveXx: 0, unavailable: 0, noAnswer: 0, slowest: 0, others: [] };
      return t;
    },
    get tally(): Tally {
      return tally;
    },
  };
}
export type ChaosClient = ReturnType<typeof createChaosClient>;
