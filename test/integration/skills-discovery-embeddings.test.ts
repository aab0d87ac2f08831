import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { loadDiscoverySet } from '../../testkit/discovery-eval.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

// A stand-in embeddings model: one dimension per word stem, so that "windy" and "wind" land on the same axis.
const DIMENSIONS = 256;
function embed(text: string): number[] {
  const v = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const stem = word.replace(/(y|s|ing|ed)$/, '');
    let h = 7;
    for (const c of stem) h = (h * 31 + c.charCodeAt(0)) % DIMENSIONS;
    v[h]! += 1;
  }
  return v;
}

describe('skill discovery with an embeddings endpoint', () => {
  let stack: TestStack;
  let server: Server;
  let key: string;
  const inputs: string[] = [];
  let failing = false;
  before(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        if (failing) return void res.writeHead(500).end();
        const { input } = JSON.parse(raw) as { input: string[] };
        inputs.push(...input);
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: embed(t) })) }));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as { port: number };
    stack = await startTestStack({ env: { EMBEDDINGS_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'embedder' });
    for (const { skillMd } of loadDiscoverySet().skills) await stack.api.createSkill(key, skillMd);
  });
  after(async () => {
    await stack.stop();
    server.close();
  });
  const discover = (q: string) => stack.api.request('GET', `/api/v1/skills/discover?q=${encodeURIComponent(q)}`, { key });

  it('stores an embedding with every chunk and embeds the message at discovery', async () => {
    const missing = await stack.db.selectFrom('skill_chunks').select('text').where('embedding', 'is', null).execute();
    assert.deepEqual(missing, []);
    const res = await discover('How windy will it be in Chicago tonight?');
    assert.ok(inputs.includes('How windy will it be in Chicago tonight?'));
    assert.equal(res.body.items[0]?.name, 'weather-briefing', 'the embedding finds what keywords and trigrams miss');
  });

  it('keeps discovering on keywords and trigrams, and keeps storing skills, when the endpoint fails', async () => {
    failing = true;
    try {
      const res = await discover('Scale my pancake recipe from 4 servings to 10');
      assert.equal(res.status, 200);
      assert.equal(res.body.items[0]?.name, 'recipe-scaler');
      const created = await stack.api.createSkill(key, '---\nname: no-vectors\ndescription: Stored without embeddings.\n---\nDo it.\n');
      const rows = await stack.db.selectFrom('skill_chunks').select('embedding').where('skill_id', '=', created.id).execute();
      assert.deepEqual(rows, [{ embedding: null }]);
    } finally {
      failing = false;
    }
  });
});
