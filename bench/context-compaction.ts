import type { RecordedRequest } from '../fake-model/fake-model-types.ts';
import type { TestStack } from '../testkit/test-stack.ts';
import { until } from '../testkit/until.ts';
import { startBenchStack } from './bench-kit.ts';
import { log, maxOf, median, type Row } from './stats.ts';

const BENCH = 'context-compaction';
const EXCHANGES = Number(process.env.BENCH_COMPACTION_EXCHANGES ?? 100);
/** The compaction threshold of the "on" run: 30k tokens, where a 200k-token window would use 150k (the default). */
const COMPACT_AT = 30_000;
const RESULT_BYTES = 10_000;

/**
 * Tokens sent per exchange in a session of EXCHANGES exchanges (each: a tool call whose result is ~10 KB, then an
 * answer), with context compaction on (CONTEXT_COMPACT_AT_TOKENS=30000, CONTEXT_KEEP_TURNS=4) and off. Tokens as the
 * fake model counts them (4 characters a token), summed over an exchange's calls, summary calls included.
 */
export async function run(): Promise<Row[]> {
  const on = await session({ CONTEXT_COMPACT_AT_TOKENS: String(COMPACT_AT), CONTEXT_KEEP_TURNS: '4' });
  const off = await session({ CONTEXT_COMPACT_AT_TOKENS: '0' });
  const describe = (t: number[]) =>
    `first ${t[0]} · 10th ${t[9] ?? '-'} · 50th ${t[49] ?? '-'} · last ${t.at(-1)} · max ${maxOf(t)} · median ${Math.round(median(t))}`;
  return [
    { bench: BENCH, figure: `tokens sent per exchange, compaction on (${EXCHANGES} exchanges, 10 KB tool results)`, value: describe(on) },
    { bench: BENCH, figure: 'the same, compaction off', value: describe(off) },
    {
      bench: BENCH,
      figure: 'whole session, tokens sent: on / off',
      value: `${sum(on)} / ${sum(off)} (${(sum(on) / sum(off)).toFixed(2)}×)`,
    },
  ];
}

async function session(env: Record<string, string>): Promise<number[]> {
  const { stack, key } = await startBenchStack({ name: 'reader', tools: ['lab.lookup'], maxTurns: 3 }, env);
  try {
    const filler = '·'.repeat(RESULT_BYTES / 100 - 20);
    stack.tools.on('lookup', (req) => ({
      body: { rows: Array.from({ length: 100 }, (_, i) => `${i} ${JSON.stringify(req.input)} ${filler}`) },
    }));
    let calls = 0;
    stack.model.setHandler((r) => {
      if (JSON.stringify(r.body).includes('You compact a conversation')) return { reply: { text: 'Summary: logs read, rows seen.' } };
      if (r.toolResults.length > 0) return { reply: { text: `Read ${r.toolResults.length} result(s).` } };
      return { reply: { toolUses: [{ id: `tu_${++calls}`, name: 'lab__lookup', input: { q: `part ${calls}` } }] } };
    });
    const { id } = await stack.api.startMission(key, { skill: 'reader', objective: 'Read the logs, part by part.', session: true });
    const perExchange: number[] = [];
    let seen = 0;
    for (let n = 1; n <= EXCHANGES; n++) {
      if (n > 1) await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: `Read part ${n}.` } });
      await idle(stack, key, id, n);
      const requests = stack.model.requests.slice(seen);
      seen += requests.length;
      perExchange.push(requests.reduce((t, r) => t + tokens(r), 0));
    }
    log(BENCH, `${env.CONTEXT_COMPACT_AT_TOKENS === '0' ? 'off' : 'on'}: ${EXCHANGES} exchanges done`);
    await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
    await stack.api.waitForEnd(key, id);
    return perExchange;
  } finally {
    await stack.stop();
  }
}

const idle = (stack: TestStack, key: string, id: string, exchanges: number) =>
  until(
    async () => {
      const m = (await stack.api.getMission(key, id)).body;
      return m.status === 'idle' && m.exchanges?.length === exchanges;
    },
    { timeoutMs: 120_000, everyMs: 20, what: `exchange ${exchanges}` },
  );

const tokens = (r: RecordedRequest) => Math.max(1, Math.ceil(JSON.stringify(r.body ?? '').length / 4));
const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
