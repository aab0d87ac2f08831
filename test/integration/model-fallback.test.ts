import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { IGNORED_PROGRESS_SINKS } from '../../events/progress-sinks.ts';
import type { MissionEvent } from '../../contracts/events.ts';
import type { RecordedRequest, Step } from '../../fake-model/fake-model-types.ts';
import { eventsOf } from '../../testkit/api-client.ts';
import { freePort } from '../../testkit/free-port.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const PRIMARY = 'claude-primary';
/** A 503 whose retry hint keeps the test short: the call's three attempts take ~100 ms, not the policy's 2 s + 4 s. */
const OVERLOADED: Step = { status: 503, headers: { 'retry-after-ms': '50' }, message: 'overloaded' };
const lookup = (id: string): Step => ({ reply: { toolUses: [{ id, name: 'lab__lookup', input: { q: 'ledger' } }] } });

/** The worker's sample of `cadenza_model_fallbacks_total` for these labels (0 when absent). */
async function fallbacksCounted(stack: TestStack, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stack.worker!.metricsPort}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('cadenza_model_fallbacks_total{') && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Runs one mission to its end: what the API says of it, its durable events, the model requests it made. */
async function run(stack: TestStack, key: string, objective: string) {
  const before = stack.model.requests.length;
  const { id } = await stack.api.startMission(key, { skill: 'ledger', objective });
  const mission = await stack.api.waitForEnd(key, id);
  const events = eventsOf((await stack.api.readEvents(key, id)).frames);
  const fallbacks = events.filter((e): e is Extract<MissionEvent, { type: 'model_fallback' }> => e.type === 'model_fallback');
  return { id, mission, fallbacks, requests: stack.model.requests.slice(before) };
}

/** Who answered each of a mission's model calls, as their records say. */
async function answeredBy(stack: TestStack, missionId: string): Promise<string[][]> {
  const rows = await stack.db
    .selectFrom('model_calls')
    .select(['call_key', 'provider', 'model'])
    .where('mission_id', '=', missionId)
    .orderBy('id')
    .execute();
  return rows.map((r) => [r.call_key, String(r.provider), r.model]);
}

const to = (requests: RecordedRequest[], model: string) => requests.filter((r) => r.model === model);

describe('model fallback chains: a tier goes on to its next provider:model when one is overloaded or down', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({
      env: (model) => ({
        MODEL_TIER_ALLEGRO: PRIMARY,
        MODEL_TIER_ALLEGRO_FALLBACKS: 'openai:gpt-backup, anthropic:claude-backup',
        MODEL_OPENAI_BASE_URL: model.openaiBaseUrl,
      }),
    });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'ledger', tools: ['lab.lookup'], maxTurns: 3 }));
    stack.tools.on('lookup', () => ({ body: { balance: 'matches the source' } }));
  });
  after(() => stack?.stop());

  it('answers turn 2 on OpenAI once Anthropic 503s through its retries, with turn 1 (Anthropic tool use and result) in its prompt', async () => {
    const labels = { tier: 'allegro', from: `anthropic:${PRIMARY}`, to: 'openai:gpt-backup', reason: 'server_error' };
    const countedBefore = await fallbacksCounted(stack, labels);
    stack.model.setHandler((r) => {
      if (r.model === PRIMARY) return r.allToolResults.length === 0 ? lookup('toolu_01Anthropic') : OVERLOADED;
      return { reply: { text: 'answered by the backup' } };
    });
    const { id, mission, fallbacks, requests } = await run(stack, key, 'Check the ledger.');

    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    assert.equal(mission.result.text, 'answered by the backup');
    assert.equal(to(requests, PRIMARY).length, 4, "turn 1, then turn 2's call and its two retries");
    assert.deepEqual(
      fallbacks.map(({ turn, from, to, reason }) => ({ turn, from, to, reason })),
      [{ turn: 2, from: `anthropic:${PRIMARY}`, to: 'openai:gpt-backup', reason: 'server_error' }],
    );
    assert.match(fallbacks[0]!.message, /503/);
    // The conversation as OpenAI sees it: the same system prompt and objective, Anthropic's tool use as tool_calls, its result as a tool message.
    const [anthropic, openai] = [to(requests, PRIMARY)[0]!, to(requests, 'gpt-backup')[0]!];
    assert.equal(openai.protocol, 'openai');
    assert.equal(openai.system, anthropic.system);
    const raw = openai.messages as Array<{
      role: string;
      content?: unknown;
      tool_calls?: Array<{ id: string; function: { name: string } }>;
    }>;
    assert.match(JSON.stringify(raw.find((m) => m.role === 'user')?.content), /Check the ledger/);
    assert.deepEqual(
      raw.find((m) => m.role === 'assistant')?.tool_calls?.map((c) => [c.id, c.function.name]),
      [['toolu_01Anthropic', 'lab__lookup']],
    );
    assert.deepEqual(
      openai.toolResults.map((t) => t.toolUseId),
      ['toolu_01Anthropic'],
    );
    assert.match(openai.toolResults[0]!.content, /matches the source/);
    // The call's record says who answered each turn.
    assert.deepEqual(await answeredBy(stack, id), [
      ['turn-1', 'anthropic', PRIMARY],
      ['turn-2', 'openai', 'gpt-backup'],
    ]);
    assert.equal((await fallbacksCounted(stack, labels)) - countedBefore, 1, 'the switch is counted on /metrics');
  });

  it('does not fall back on a 400 about the request: the mission fails, the fallbacks are never asked', async () => {
    stack.model.setHandler((r) =>
      r.model === PRIMARY ? { status: 400, message: 'messages: bad block' } : { reply: { text: 'should not be asked' } },
    );
    const { mission, fallbacks, requests } = await run(stack, key, 'A request the provider refuses.');

    assert.equal(mission.status, 'failed');
    assert.match(mission.error.message, /400/);
    assert.equal(requests.length, 1, 'one request, not retried and not sent elsewhere');
    assert.deepEqual(fallbacks, []);
  });

  it('walks a chain of two fallbacks, OpenAI to Anthropic included: each target spends its own retries', async () => {
    stack.model.setHandler((r) => {
      if (r.model === PRIMARY) return OVERLOADED;
      if (r.model === 'gpt-backup') return r.allToolResults.length === 0 ? lookup('call_openai42') : OVERLOADED;
      return { reply: { text: 'answered by the last of the chain' } };
    });
    const { id, mission, fallbacks, requests } = await run(stack, key, 'Check the ledger again.');

    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    assert.equal(mission.result.text, 'answered by the last of the chain');
    assert.deepEqual(
      fallbacks.map(({ turn, from, to }) => `${turn}: ${from} → ${to}`),
      [
        `1: anthropic:${PRIMARY} → openai:gpt-backup`,
        `2: anthropic:${PRIMARY} → openai:gpt-backup`,
        '2: openai:gpt-backup → anthropic:claude-backup',
      ],
    );
    assert.equal(to(requests, PRIMARY).length, 6, 'three attempts in each turn');
    assert.equal(to(requests, 'gpt-backup').length, 4, "turn 1's answer, then turn 2's three attempts");
    // OpenAI's tool call and its result reach Anthropic as a tool_use and a tool_result.
    const last = to(requests, 'claude-backup')[0]!;
    assert.equal(last.protocol, 'anthropic');
    const assistant = (last.messages as Array<{ role: string; content: Array<{ type: string; id?: string }> }>).find(
      (m) => m.role === 'assistant',
    );
    assert.deepEqual(
      assistant?.content.filter((b) => b.type === 'tool_use').map((b) => b.id),
      ['call_openai42'],
    );
    assert.deepEqual(
      last.toolResults.map((t) => t.toolUseId),
      ['call_openai42'],
    );
    assert.deepEqual(await answeredBy(stack, id), [
      ['turn-1', 'openai', 'gpt-backup'],
      ['turn-2', 'anthropic', 'claude-backup'],
    ]);
    // The decisions replay from history alone; RECORD_HISTORIES=1 keeps this run as a fixture of the replay test.
    const history = await stack.handle(id).fetchHistory();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.CADENZA_TEST_BUNDLE! }, sinks: IGNORED_PROGRESS_SINKS },
      history,
    );
    if (process.env.RECORD_HISTORIES)
      writeFileSync(
        new URL('../fixtures/histories/mission-model-fallback.pb', import.meta.url),
        proto.temporal.api.history.v1.History.encode(history).finish(),
      );
  });
});

describe('model fallback chains: an outage', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    const closed = await freePort(); // nothing listens there: every call is refused
    stack = await startTestStack({
      env: (model) => ({
        MODEL_BASE_URL: `http://127.0.0.1:${closed}`,
        MODEL_TIER_ALLEGRO: PRIMARY,
        MODEL_TIER_ALLEGRO_FALLBACKS: 'openai:gpt-backup',
        MODEL_OPENAI_BASE_URL: model.openaiBaseUrl,
      }),
    });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'ledger', maxTurns: 2 }));
  });
  after(() => stack?.stop());

  it('falls back when the primary refuses connections, once its retries are spent', async () => {
    stack.model.setHandler(() => ({ reply: { text: 'answered while the primary is down' } }));
    const { id, mission, fallbacks, requests } = await run(stack, key, 'Anything.');

    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    assert.equal(mission.result.text, 'answered while the primary is down');
    assert.deepEqual(
      fallbacks.map(({ from, to, reason }) => [from, to, reason]),
      [[`anthropic:${PRIMARY}`, 'openai:gpt-backup', 'network']],
    );
    assert.match(fallbacks[0]!.message, /connection/i);
    assert.equal(requests.length, 1, 'only the fallback was reached');
    assert.deepEqual(await answeredBy(stack, id), [['turn-1', 'openai', 'gpt-backup']]);
  });
});

describe('model fallback chains: a compaction', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({
      env: (model) => ({
        MODEL_TIER_ALLEGRO: PRIMARY,
        MODEL_TIER_ALLEGRO_FALLBACKS: 'openai:gpt-backup',
        MODEL_OPENAI_BASE_URL: model.openaiBaseUrl,
        CONTEXT_COMPACT_AT_TOKENS: '1000',
        CONTEXT_KEEP_TURNS: '1',
      }),
    });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'ledger', tools: ['lab.lookup'], maxTurns: 3 }));
    // ~10 KB per result (the fake counts 4 characters a token): the prompt passes the threshold after one lookup.
    stack.tools.on('lookup', () => ({ body: { rows: Array.from({ length: 100 }, (_, i) => `row ${i} ${'·'.repeat(90)}`) } }));
  });
  after(() => stack?.stop());

  it("sends the summary call along the chain too: the primary down, the mission's compaction is written by the fallback", async () => {
    const isSummary = (r: RecordedRequest) => JSON.stringify(r.body).includes('You compact a conversation');
    let turns = 0;
    stack.model.setHandler((r) => {
      if (r.model === PRIMARY) return OVERLOADED;
      if (isSummary(r)) return { reply: { text: 'SUMMARY: the ledger rows were looked up.' } };
      return ++turns < 3 ? lookup(`call_${turns}`) : { reply: { text: 'the ledger checks out' } };
    });
    const { id, mission, fallbacks, requests } = await run(stack, key, 'Check the ledger rows.');

    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    assert.equal(mission.result.text, 'the ledger checks out');
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.ok(
      events.some((e) => e.type === 'context_compacted'),
      'a compaction ran',
    );
    const summaries = to(requests, 'gpt-backup').filter(isSummary);
    assert.ok(summaries.length >= 1, 'the summary was asked of the fallback');
    // Every model activity, turn or summary, spent the primary's three attempts, then moved on once.
    assert.equal(fallbacks.length, to(requests, 'gpt-backup').length);
    assert.equal(to(requests, PRIMARY).length, 3 * fallbacks.length);
  });
});
