import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { duplexPair, type Duplex } from 'node:stream';
import { serveCallbacks, type ScriptCall } from '../../skill-scripts/callback-pipe.ts';

/** The script's end of a pipe served with `maxCalls`, and the calls that reached the handler. */
function served(maxCalls: number) {
  const [ours, theirs] = duplexPair();
  const calls: ScriptCall[] = [];
  const server = serveCallbacks(
    ours,
    async (call) => {
      calls.push(call);
      await new Promise((r) => setTimeout(r, 5));
      return call.tool === 'boom' ? Promise.reject(new Error('the tool failed')) : { ok: true, result: { echo: call.input } };
    },
    maxCalls,
  );
  return { script: theirs, calls, server };
}

async function replies(script: Duplex, count: number): Promise<Array<Record<string, unknown>>> {
  let text = '';
  for await (const chunk of script) {
    text += String(chunk);
    if (text.split('\n').length > count) break;
  }
  return text
    .split('\n')
    .slice(0, count)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the callback line protocol', () => {
  it('answers each request line in order, one at a time, and errors as data', async () => {
    const { script, calls } = served(5);
    script.write('{"tool":"search_memory","input":{"query":"a"}}\n{"tool":"boom"}\nnot json\n{"tool":"x","input":[1]}\n');
    const answers = await replies(script, 4);
    assert.deepEqual(answers[0], { ok: true, result: { echo: { query: 'a' } } });
    assert.deepEqual(answers[1], { ok: false, error: 'the tool failed' });
    assert.match(String(answers[2]!.error), /one line of JSON/);
    assert.match(String(answers[3]!.error), /"input" must be a JSON object/);
    assert.deepEqual(
      calls.map((c) => [c.seq, c.tool]),
      [
        [1, 'search_memory'],
        [2, 'boom'],
      ],
    );
  });

  it('lets at most maxCalls calls through, and closes the pipe on a flood or an over-long line', async () => {
    const flood = served(2);
    flood.script.write('{"tool":"a"}\n'.repeat(30));
    const answers = await replies(flood.script, 15);
    assert.equal(flood.calls.length, 2);
    assert.match(String(answers[2]!.error), /at most 2 tool calls per script run/);
    assert.match(String(answers[14]!.error), /more than 14 requests; the pipe is closed/);

    const long = served(2);
    long.script.write('x'.repeat(70 * 1024));
    assert.match(String((await replies(long.script, 1))[0]!.error), /limited to 65536 bytes; the pipe is closed/);
    assert.equal(long.calls.length, 0);
  });
});
