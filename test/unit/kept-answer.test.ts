import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { KEEP_BOUND_BYTES, pack, unpack } from '../../activities/kept-answer.ts';

describe('an answer kept in heartbeat details', () => {
  it('keeps a small answer as it is, readable', () => {
    const reply = { content: [{ type: 'text', text: 'done' }], usage: { inputTokens: 1000, outputTokens: 10 } };
    const kept = pack(reply);
    assert.deepEqual(kept, { value: reply });
    assert.deepEqual(unpack(kept!), reply);
  });

  it('gzips a large answer under the bound and gives it back whole', () => {
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['alpha', 'beta'] }));
    const result = { ok: true, result: { rows } };
    assert.ok(JSON.stringify(result).length > KEEP_BOUND_BYTES, 'the answer itself is past the bound');
    const kept = pack(result);
    assert.ok(kept && 'gzip' in kept && kept.gzip.length <= KEEP_BOUND_BYTES);
    assert.deepEqual(unpack(kept), result);
  });

  it('does not keep an answer whose compressed form is still past the bound', () => {
    const noise = randomBytes(300 * 1024).toString('base64');
    assert.equal(pack({ ok: true, result: noise }), undefined);
  });
});
