import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf, type SseFrame } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

type Timed = SseFrame & { at: number };

async function readTimed(stack: TestStack, key: string, id: string): Promise<Timed[]> {
  const timed: Timed[] = [];
  await stack.api.readEvents(key, id, { onFrame: (f) => void timed.push({ ...f, at: Date.now() }) });
  return timed.filter((f) => f.data !== undefined);
}
const deltas = (frames: SseFrame[]) => frames.filter((f) => f.event === 'text_delta').map((f) => JSON.parse(f.data!).text as string);

for (const provider of ['anthropic', 'openai'] as const) {
  describe(`streamed model text (${provider})`, () => {
    let stack: TestStack;
    let key: string;
    before(async () => {
      stack = await startTestStack({ provider });
      key = await stack.api.newKey();
      await stack.api.createSkill(key, skillMd({ name: 'talker', tools: ['lab.lookup'], maxTurns: 3 }));
    });
    after(() => stack.stop());

    it('sends the reply as text_delta events while the model call runs, and none of them into history', async () => {
      const text = 'The answer arrives word by word, as the provider streams it.';
      stack.model.enqueue({ reply: { text }, chunkDelayMs: 60 });
      const { id } = await stack.api.startMission(key, { skill: 'talker', objective: 'talk to me' });
      const frames = await readTimed(stack, key, id);
      assert.equal(deltas(frames).join(''), text, 'the deltas add up to the reply');
      // Deltas queued while a notification is in flight are merged: under load there are fewer, never none.
      assert.ok(deltas(frames).length >= 2, 'in more than one piece');
      const request = stack.model.requests.at(-1)!;
      const first = frames.find((f) => f.event === 'text_delta')!;
      assert.ok(first.at < request.finishedAt!, 'the first words reach the client before the model has finished');
      const types = frames.map((f) => f.event);
      assert.ok(types.indexOf('text_delta') > types.indexOf('turn') && types.lastIndexOf('text_delta') < types.lastIndexOf('status'));
      assert.deepEqual(
        eventsOf(frames).map((e) => e.type),
        ['status', 'turn', 'status'],
        'live events carry no seq and leave the event log as it was',
      );
      const history = JSON.stringify(await stack.handle(id).fetchHistory());
      assert.ok(!history.includes('text_delta'), 'no delta in workflow history');
      const again = await stack.api.readEvents(key, id);
      assert.equal(deltas(again.frames).length, 0, 'a later reader gets the event log, not the live events');
    });

    it('sends reset before the text of a retried attempt, so the half-answer of the failed one is dropped', async () => {
      stack.model.enqueue(
        { reply: { text: 'A first attempt that breaks off somewhere in the middle.' }, chunkDelayMs: 20, cutAfterChunks: 3 },
        { reply: { text: 'The retried answer.' }, chunkDelayMs: 20 },
      );
      const { id } = await stack.api.startMission(key, { skill: 'talker', objective: 'retry me' });
      const frames = await readTimed(stack, key, id);
      const live = frames.filter((f) => f.event === 'text_delta' || f.event === 'reset');
      const reset = live.findIndex((f) => f.event === 'reset');
      assert.ok(reset > 0, `a reset after the first attempt's words: ${live.map((f) => f.event).join(' ')}`);
      const half = deltas(live.slice(0, reset)).join('');
      assert.ok(half.length > 0 && 'A first attempt that breaks off'.startsWith(half), `the broken attempt's words first: ${half}`);
      assert.equal(deltas(live.slice(reset + 1)).join(''), 'The retried answer.');
      assert.deepEqual(JSON.parse(live[reset]!.data!), { type: 'reset', turn: 1 });
      assert.equal((await stack.api.getMission(key, id)).body.result.text, 'The retried answer.');
    });
  });
}
