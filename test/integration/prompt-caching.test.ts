import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const MODEL = 'fake-claude';
const PRICES = { [MODEL]: { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 } };
/** A 6 KB procedure, so the stable prefix passes the providers' 1,024-token minimum from the first call. */
const PROCEDURE = Array.from(
  { length: 60 },
  (_, i) => `${i + 1}. Check section ${i + 1} of the ledger against the source and note any gap.`,
).join('\n');
const TURNS = 10;

type Unit = { text: string; breakpoint: boolean };
/** A request as the units a prompt cache compares (tools, system, each message block), `cache_control` left out. */
function units(r: RecordedRequest): Unit[] {
  const b = r.body as { tools?: unknown[]; system?: unknown; messages: Array<{ role: string; content: unknown }> };
  const unit = (prefix: string, block: unknown): Unit => {
    const { cache_control: mark, ...rest } = (typeof block === 'object' && block !== null ? block : { text: block }) as Record<
      string,
      unknown
    >;
    return { text: prefix + JSON.stringify(rest), breakpoint: mark !== undefined };
  };
  const system = typeof b.system === 'string' ? [b.system] : ((b.system as unknown[]) ?? []);
  return [
    ...(b.tools ?? []).map((t) => unit('tool:', t)),
    ...system.map((s) => unit('system:', s)),
    ...b.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [m.content]).map((c) => unit(`${m.role}:`, c))),
  ];
}

/** A 10-turn mission (a 2 KB tool result each turn) on a stack of its own; its model requests and its result. */
async function mission(env: Record<string, string>, provider: 'anthropic' | 'openai' = 'anthropic') {
  const stack: TestStack = await startTestStack({
    provider,
    env: { MODEL_TIER_MINUET: MODEL, MODEL_TIER_ALLEGRO: MODEL, MODEL_TIER_FORTE: MODEL, MODEL_PRICES: JSON.stringify(PRICES), ...env },
  });
  try {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'ledger', tools: ['lab.lookup'], maxTurns: TURNS, body: PROCEDURE }));
    stack.tools.on('lookup', (input) => ({
      body: { section: input.q, lines: Array.from({ length: 40 }, (_, i) => `line ${i}: ok ·····`) },
    }));
    let calls = 0;
    stack.model.setHandler(() =>
      ++calls < TURNS
        ? { reply: { toolUses: [{ id: `tu_${calls}`, name: 'lab__lookup', input: { q: `section ${calls}` } }] } }
        : { reply: { text: 'The ledger checks out.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'ledger', objective: 'Check the ledger.' });
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed', JSON.stringify(ended.error));
    return { requests: [...stack.model.requests], result: ended.result };
  } finally {
    await stack.stop();
  }
}

describe('prompt caching: a byte-stable prefix, read back from the cache, priced at the cache rates', () => {
  it('Anthropic: each request starts with the previous one up to its last breakpoint; turns 2–10 read it from the cache', async () => {
    const { requests, result } = await mission({});
    assert.equal(requests.length, TURNS);
    for (let t = 1; t < requests.length; t++) {
      const before = units(requests[t - 1]!);
      const now = units(requests[t]!);
      const last = before.findLastIndex((u) => u.breakpoint);
      assert.ok(last > 0, `request ${t} has breakpoints`);
      assert.deepEqual(
        now.slice(0, last + 1).map((u) => u.text),
        before.slice(0, last + 1).map((u) => u.text),
        `request ${t + 1} repeats request ${t}'s bytes up to its last breakpoint`,
      );
      assert.ok(now.filter((u) => u.breakpoint).length <= 4, 'at most 4 breakpoints');
    }
    for (const [t, r] of requests.entries()) if (t > 0) assert.ok((r.cache?.readTokens ?? 0) > 0, `turn ${t + 1} read from the cache`);
    const read = requests.reduce((n, r) => n + (r.cache?.readTokens ?? 0), 0);
    const written = requests.reduce((n, r) => n + (r.cache?.creationTokens ?? 0), 0);
    const m = result.metrics;
    assert.equal(m.cacheReadTokens, read, 'the mission counts what the provider reported read');
    assert.equal(m.cacheCreationTokens, written);
    const full = m.inputTokens - read - written;
    const expected = (full * 3 + read * 0.3 + written * 3.75 + m.outputTokens * 15) / 1_000_000;
    assert.ok(Math.abs(m.costUsd - expected) < 1e-9, `cost ${m.costUsd} priced at the cache rates (${expected})`);
    assert.ok(m.costUsd < ((m.inputTokens * 3 + m.outputTokens * 15) / 1_000_000) * 0.6, 'cheaper than without the cache');
  });

  it('MODEL_PROMPT_CACHING=false sends no breakpoint, and nothing is read from the cache', async () => {
    const { requests, result } = await mission({ MODEL_PROMPT_CACHING: 'false' });
    for (const r of requests) assert.equal(units(r).filter((u) => u.breakpoint).length, 0);
    assert.equal(result.metrics.cacheReadTokens, undefined);
    assert.equal(typeof (requests[0]!.body as { system: unknown }).system, 'string');
  });

  it('OpenAI: its automatic prefix cache is read from turn 2 on, and counted', async () => {
    const { requests, result } = await mission({}, 'openai');
    for (const [t, r] of requests.entries()) if (t > 0) assert.ok((r.cache?.readTokens ?? 0) > 0, `turn ${t + 1} read from the cache`);
    assert.equal(
      result.metrics.cacheReadTokens,
      requests.reduce((n, r) => n + (r.cache?.readTokens ?? 0), 0),
    );
  });
});
