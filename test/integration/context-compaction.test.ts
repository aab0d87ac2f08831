import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';

const SUMMARISER = 'You compact a conversation';
const isSummaryCall = (r: RecordedRequest) => JSON.stringify(r.body).includes(SUMMARISER);
type Block = { type: string; text?: string; id?: string; tool_use_id?: string };
type Message = { role: string; content: string | Block[] };
const blocks = (m: Message): Block[] => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content);

/**
 * Context compaction against the real server: a session whose tool results are 10 KB each passes
 * CONTEXT_COMPACT_AT_TOKENS (set low) within a few exchanges; the model folds the older turns into a summary.
 */
describe('context compaction: a long session keeps fitting', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { CONTEXT_COMPACT_AT_TOKENS: '4000', CONTEXT_KEEP_TURNS: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'reader', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack?.stop());

  it('folds older turns into a summary the model writes: bounded prompts, pairs kept whole, one summary per cut', async () => {
    // ~10 KB per result: each tool turn adds ~2,500 tokens to the prompt (the fake model counts 4 characters a token).
    stack.tools.on('lookup', (req) => ({
      body: { rows: Array.from({ length: 100 }, (_, i) => `log line ${i} of ${JSON.stringify(req.input)} ${'·'.repeat(70)}`) },
    }));
    let summaries = 0;
    let calls = 0;
    stack.model.setHandler((r) => {
      if (isSummaryCall(r)) return { reply: { text: `SUMMARY-${++summaries}: the user reads logs; lookups returned rows.` } };
      if (r.toolResults.length > 0) return { reply: { text: `Answer after ${r.toolResults.length} result(s).` } };
      return { reply: { toolUses: [{ id: `tu_${++calls}`, name: 'lab__lookup', input: { q: `part ${calls}` } }] } };
    });
    const first = stack.model.requests.length;
    const { id } = await stack.api.startMission(key, { skill: 'reader', objective: 'Read the logs.', session: true });
    const idleAfter = async (exchanges: number) =>
      until(
        async () => {
          const m = (await stack.api.getMission(key, id)).body;
          return m.status === 'idle' && m.exchanges?.length === exchanges;
        },
        { timeoutMs: 60_000, what: `exchange ${exchanges} answered` },
      );
    await idleAfter(1);
    for (let n = 2; n <= 6; n++) {
      const sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: `Read part ${n}.` } });
      assert.equal(sent.status, 202);
      await idleAfter(n);
    }

    await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    stack.model.setHandler(undefined);

    const requests = stack.model.requests.slice(first);
    const turns = requests.filter((r) => !isSummaryCall(r));
    const summaryCalls = requests.filter(isSummaryCall);
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    const compacted = events.filter((e) => e.type === 'context_compacted');
    const sizes = turns.map((r) => JSON.stringify(r.body).length);
    assert.ok(
      compacted.length >= 2,
      `compacted ${compacted.length} times in 12 turns; request bytes ${sizes.join(', ')}; last ${JSON.stringify(turns.at(-1)!.messages).slice(0, 3000)}`,
    );
    assert.equal(summaryCalls.length, compacted.length, 'one summary call per compaction');
    for (const e of compacted) assert.equal(e.uptoTurn, e.turn - 2, 'the latest CONTEXT_KEEP_TURNS turns stay verbatim');
    const stored = await stack.db.selectFrom('context_compactions').select(['upto_seq', 'summary']).where('mission_id', '=', id).execute();
    assert.equal(stored.length, compacted.length, 'each summary stored once');

    // After the first compaction, every prompt opens with the objective and the latest summary, then an assistant reply.
    const firstFold = requests.indexOf(summaryCalls[0]!);
    const after = requests.slice(firstFold + 1).filter((r) => !isSummaryCall(r));
    assert.ok(after.length > 0);
    for (const r of after) {
      const messages = r.messages as Message[];
      const opening = blocks(messages[0]!)
        .map((b) => b.text ?? '')
        .join('\n');
      assert.match(opening, /Objective: Read the logs\./);
      assert.match(opening, /Summary of the conversation so far[\s\S]*SUMMARY-\d/);
      assert.equal(messages[1]?.role, 'assistant', 'the kept turns open with a reply');
      assert.ok(r.allToolResults.length <= 2, `a compacted prompt carries at most the kept turns' results, not ${r.allToolResults.length}`);
    }
    // A later summary folds the earlier one in.
    assert.match(JSON.stringify(summaryCalls[1]!.body), /SUMMARY-1/);
    // No tool result is ever sent without its call: each answers a tool_use of the message before it.
    for (const r of turns) {
      const messages = r.messages as Message[];
      messages.forEach((m, i) => {
        for (const b of blocks(m).filter((x) => x.type === 'tool_result')) {
          const calls =
            i > 0
              ? blocks(messages[i - 1]!)
                  .filter((x) => x.type === 'tool_use')
                  .map((x) => x.id)
              : [];
          assert.ok(calls.includes(b.tool_use_id), `tool_result ${b.tool_use_id} follows its tool_use`);
        }
      });
    }
    // Without compaction the last prompt would carry all six results; with it, it stays near the threshold.
    assert.ok(Math.max(...sizes.slice(-4)) < 2 * 4_000 * 4, `the latest prompts stay bounded: ${sizes.join(', ')} bytes`);

    // The summaries' own calls count in the mission's tokens like every other call.
    const reported = requests.reduce((t, r) => t + Math.max(1, Math.ceil(JSON.stringify(r.body ?? '').length / 4)), 0);
    const counted = ended.exchanges.reduce((t: number, e: { metrics: { inputTokens: number } }) => t + e.metrics.inputTokens, 0);
    assert.equal(counted, reported, 'input tokens of every call, summaries included');
  });
});
