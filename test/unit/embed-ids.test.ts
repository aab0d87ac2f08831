import assert from 'node:assert/strict';
import { it } from 'node:test';
import { embedIdOf } from '../../activities/tool-embeds.ts';

it('an embed id is a UUID v5 of mission, turn and tool-use id: the same for every attempt, another for another call', () => {
  const id = embedIdOf('m-1', 2, 'call_0');
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(embedIdOf('m-1', 2, 'call_0'), id, 'a retried attempt names the same row');
  // Servers that reuse tool-call ids every turn (`call_0`), and ids whose parts would run together, name other rows.
  const others = [
    embedIdOf('m-1', 3, 'call_0'),
    embedIdOf('m-2', 2, 'call_0'),
    embedIdOf('m-1', 22, 'call_0'),
    embedIdOf('m-12', 2, 'call_0'),
  ];
  assert.equal(new Set([id, ...others]).size, 5);
  assert.match(embedIdOf('m-1', 1, 'toolu_01/../x?y'), /^[0-9a-f-]{36}$/, 'whatever the server put in its ids, the id is URL-safe');
});
