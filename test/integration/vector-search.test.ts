import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../../db/database.ts';
import { insertMemory } from '../../db/memories.ts';
import { migrateToLatest } from '../../db/migrator.ts';
import type { EmbeddingsClient } from '../../memory/embeddings-client.ts';
import { retrieveMemories } from '../../memory/retrieve.ts';
import { chooseVectorSearch, PGVECTOR_SEARCH } from '../../memory/vector-search.ts';
import { createTestDatabase, testDatabaseUrl } from '../../testkit/test-database.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

// A stand-in encoder of the sentence encoder's width: each word is a fixed pseudo-random direction, except that the
// words of one concept share theirs, so "ocean" finds "tide" with no word in common. A text is the mean of its words.
const DIMS = 384;
const CONCEPTS: Record<string, string> = { ocean: 'sea', sea: 'sea', tide: 'sea', tides: 'sea', harbour: 'sea', water: 'sea' };
function embed(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let seed = 2166136261;
    for (const c of CONCEPTS[word] ?? word) seed = Math.imul(seed ^ c.charCodeAt(0), 16777619);
    for (let d = 0; d < DIMS; d++) {
      seed = Math.imul(seed ^ (seed >>> 13), 0x5bd1e995);
      v[d]! += ((seed >>> 0) / 4294967296 - 0.5) * (CONCEPTS[word] ? 3 : 1);
    }
  }
  return v;
}
const FILLER = ['invoice', 'budget', 'meeting', 'slides', 'garden', 'piano', 'train', 'coffee', 'report', 'deadline', 'paint', 'bike'];
const filler = (i: number) => `Note ${i}: ${FILLER[i % 12]} ${FILLER[(i * 7) % 12]} ${FILLER[(i * 5 + 3) % 12]} for week ${i % 52}.`;
// One word, which no memory or skill of the owner shares, not even a trigram: only meaning finds them.
const QUERY = 'ocean';

/** Memory rows of a user with the test's embedding of each text, written straight to the table. */
function memoryRows(userId: string, texts: string[], model: string) {
  return texts.map((content) => ({
    id: randomUUID(),
    tenant_id: 'acme',
    user_id: userId,
    workspace_code: null,
    content,
    source: 'user',
    embedding: embed(content),
    embedding_model: model,
  }));
}

describe('nearest-neighbour search in Postgres (pgvector)', () => {
  let stack: TestStack;
  let server: Server;
  let mine: string;
  let theirs: string;
  before(async () => {
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const { input } = JSON.parse(raw) as { input: string[] };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: embed(t) })) }));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as { port: number };
    stack = await startTestStack({ env: { EMBEDDINGS_BASE_URL: `http://127.0.0.1:${port}/v1` } });
    mine = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'mine' });
    theirs = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'theirs' });
  });
  after(async () => {
    await stack.stop();
    server.close();
  });

  it('is the search this stack uses: the setup installs pgvector into the test Postgres', () => {
    assert.equal(stack.vectors.kind, 'pgvector');
  });

  it('finds the one memory of its owner that means the query among 6,000, past another user’s 300 nearer ones, and never returns theirs', async () => {
    const model = `endpoint:${stack.config.embeddings!.model}`;
    const rows = (userId: string, texts: string[]) => memoryRows(userId, texts, model);
    // Another user's memories crowd the query's neighbourhood: a scan that stopped at hnsw.ef_search would find only theirs.
    const theirTexts = Array.from({ length: 300 }, (_, i) => `${QUERY} at dock ${i}, ${FILLER[i % 12]} ${FILLER[(i * 5) % 12]}?`);
    await stack.db.insertInto('memories').values(rows('theirs', theirTexts)).execute();
    for (let i = 0; i < 6000; i += 500)
      await stack.db
        .insertInto('memories')
        .values(
          rows(
            'mine',
            Array.from({ length: 500 }, (_, j) => filler(i + j)),
          ),
        )
        .execute();
    // As autovacuum would after a bulk load: the planner then knows the table is worth its HNSW index.
    await sql`analyze memories`.execute(stack.db);
    const answer = 'High tide at Brest harbour: 14:05 today.';
    const res = await stack.api.request('POST', '/api/v1/memories', { key: mine, body: { content: answer } });
    assert.equal(res.status, 201);

    const found = await stack.api.request('GET', `/api/v1/memories?q=${encodeURIComponent(QUERY)}&limit=5`, { key: mine });
    assert.equal(found.status, 200);
    const contents = (found.body.items as Array<{ content: string }>).map((m) => m.content);
    assert.equal(contents[0], answer, contents.join(' | '));
    assert.deepEqual(
      contents.filter((c) => theirTexts.includes(c)),
      [],
      'no memory of another user',
    );
    const other = await stack.api.request('GET', `/api/v1/memories?q=${encodeURIComponent(QUERY)}&limit=5`, { key: theirs });
    assert.ok(!(other.body.items as Array<{ content: string }>).some((m) => m.content === answer), 'theirs never see mine either');
  });

  it('discovers the owner’s skill that means the ask among 150, never another user’s nearer skills', async () => {
    for (let i = 0; i < 40; i++)
      await stack.api.createSkill(
        theirs,
        `---\nname: sea-${i}\ndescription: When the ocean and the sea come in at dock ${i}.\n---\nCheck.\n`,
      );
    for (let i = 0; i < 150; i++)
      await stack.api.createSkill(
        mine,
        `---\nname: chore-${i}\ndescription: Handles ${FILLER[i % 12]} and ${FILLER[(i * 7) % 12]} chores, batch ${i}.\n---\nDo it.\n`,
      );
    await sql`analyze skill_chunks`.execute(stack.db);
    await stack.api.createSkill(mine, '---\nname: harbour-times\ndescription: Tides and water levels at a harbour.\n---\nLook them up.\n');

    const res = await stack.api.request('GET', `/api/v1/skills/discover?q=${encodeURIComponent(QUERY)}`, { key: mine });
    assert.equal(res.status, 200);
    const names = (res.body.items as Array<{ name: string }>).map((s) => s.name);
    assert.equal(names[0], 'harbour-times', names.join(', '));
    assert.deepEqual(
      names.filter((n) => n.startsWith('sea-')),
      [],
      'no skill of another user',
    );
  });
});

describe('nearest memories when the HNSW graph does not lead to the owner’s', () => {
  it('answers with the owner’s nearest memory though 300 near-duplicates of another user crowd it out of the index’s reach', async () => {
    const { db, drop } = await createTestDatabase();
    try {
      const ask = 'when does the ocean come in';
      const rows = (userId: string, texts: string[]) => memoryRows(userId, texts, 'm');
      // Inserted first and nearly identical: the graph's entry and its neighbourhood, with no edge out to the rest.
      await db
        .insertInto('memories')
        .values(
          rows(
            'theirs',
            Array.from({ length: 300 }, (_, i) => `${ask} at dock ${i}, ${FILLER[i % 12]} ${FILLER[(i * 5) % 12]}?`),
          ),
        )
        .execute();
      for (let i = 0; i < 1500; i += 500)
        await db
          .insertInto('memories')
          .values(
            rows(
              'mine',
              Array.from({ length: 500 }, (_, j) => filler(i + j)),
            ),
          )
          .execute();
      await db
        .insertInto('memories')
        .values(rows('mine', ['High tide at the harbour of Brest: 14:05 today.']))
        .execute();
      await sql`analyze memories`.execute(db);
      const found = await PGVECTOR_SEARCH.memories(db, { owner: { tenantId: 'acme', userId: 'mine' } }, 'm', embed(ask), 5);
      assert.equal(found.length, 5);
      const [first] = await db.selectFrom('memories').select('content').where('id', '=', found[0]!.id).execute();
      assert.equal(first?.content, 'High tide at the harbour of Brest: 14:05 today.');
    } finally {
      await drop();
    }
  });
});

describe('vector search without pgvector', () => {
  const encoder: EmbeddingsClient = { model: 'test:concepts', embed: async (texts) => texts.map(embed) };

  it('migrates the embedded database (PGlite, no vector extension) and retrieves by meaning in process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cadenza-no-pgvector-'));
    const { db } = await createDatabase({ dataDir: dir });
    try {
      await migrateToLatest(db);
      const vectors = await chooseVectorSearch(db);
      assert.equal(vectors.kind, 'in-process');
      const owner = { tenantId: 't', userId: 'u' };
      for (const content of ['Tide tables for the harbour: high water at 14:05.', filler(1), filler(2)])
        await insertMemory(db, {
          owner,
          workspaceCode: null,
          content,
          source: 'user',
          embedding: { model: encoder.model, vector: embed(content) },
        });
      const rows = await retrieveMemories({ db, embeddings: encoder, vectors }, { owner }, QUERY, 1);
      assert.deepEqual(
        rows.map((r) => r.content),
        ['Tide tables for the harbour: high water at 14:05.'],
      );
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('migrates on a server whose role may not create pgvector, and compares vectors in process there', async () => {
    const admin = testDatabaseUrl();
    const name = `cadenza_np_${randomUUID().slice(0, 8)}`;
    const query = async (sql: string) => {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(sql);
      } finally {
        await client.end();
      }
    };
    await query(`create role ${name} login`);
    await query(`create database ${name} owner ${name}`);
    const url = new URL(admin);
    url.username = name;
    url.pathname = `/${name}`;
    const { db } = await createDatabase({ databaseUrl: url.toString(), dataDir: '.data' });
    try {
      await migrateToLatest(db);
      assert.equal((await chooseVectorSearch(db)).kind, 'in-process');
    } finally {
      await db.destroy();
      await query(`drop database if exists ${name} with (force)`);
      await query(`drop role if exists ${name}`);
    }
  });
});
