import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../config/config.ts';
import { buildEmbeddings } from '../../memory/build-embeddings.ts';
import { cosine } from '../../memory/embeddings-client.ts';
import { sentenceEncoderInstalled } from '../../config/cache-dir.ts';
import { createSentenceEncoder } from '../../memory/sentence-encoder.ts';

const config = loadConfig({ ...process.env, EMBEDDINGS_BASE_URL: '' });

describe('the local sentence encoder (all-MiniLM-L6-v2, int8 ONNX from PyPI)', () => {
  const encoder = createSentenceEncoder({ modelDir: config.sentenceEncoderDir });

  it('is installed by the setup', () => {
    assert.ok(sentenceEncoderInstalled(config.sentenceEncoderDir), config.sentenceEncoderDir);
  });

  it('gives unit vectors of 384 dimensions, one per text, in order', async () => {
    const vectors = await encoder.embed(['kilometres', 'a longer sentence about the weekly board report', '']);
    assert.equal(vectors.length, 3);
    for (const v of vectors) {
      assert.equal(v.length, 384);
      assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-6);
    }
  });

  it('ranks by meaning: "units" is nearer to "kilometres" than to words it shares', async () => {
    const [ask, answer, lookAlike, other] = await encoder.embed([
      'Which units should the report use?',
      'We report distances in kilometres.',
      'Use the shared drive for every report draft.',
      'The deploy runs every Friday.',
    ]);
    assert.ok(cosine(ask!, answer!) > cosine(ask!, lookAlike!), 'the paraphrase beats the look-alike');
    assert.ok(cosine(ask!, answer!) > cosine(ask!, other!) + 0.2);
  });

  it('embeds a text the same alone and padded in a batch beside longer ones', async () => {
    const text = 'Invoices are paid within thirty days.';
    const [alone] = await encoder.embed([text]);
    const batch = await encoder.embed([
      'A much longer text, so that the short one is padded: the quarterly review lists every region and its totals.',
      text,
    ]);
    assert.ok(cosine(alone!, batch[1]!) > 0.9999);
  });

  it('cuts a very long text instead of failing', async () => {
    const [v] = await encoder.embed(['word '.repeat(5000)]);
    assert.equal(v!.length, 384);
  });

  it('is what buildEmbeddings picks without an endpoint; word vectors when it is not installed', () => {
    assert.equal(config.localEncoder, 'sentence-encoder');
    assert.equal(buildEmbeddings(config).kind, 'sentence-encoder');
    const empty = mkdtempSync(join(tmpdir(), 'cadenza-no-encoder-'));
    const without = loadConfig({ ...process.env, EMBEDDINGS_BASE_URL: '', SENTENCE_ENCODER_DIR: empty });
    rmSync(empty, { recursive: true });
    assert.equal(without.localEncoder, 'word-vectors');
    assert.equal(buildEmbeddings(without).kind, 'word-vectors');
    assert.equal(
      buildEmbeddings({ ...config, embeddings: { baseUrl: 'http://127.0.0.1:9', apiKey: undefined, model: 'm' } }).kind,
      'endpoint',
    );
  });
});
