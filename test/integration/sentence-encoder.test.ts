import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { describe, it } from 'node:test';
import { loadConfig } from '../../config/config.ts';
import { buildEmbeddings } from '../../memory/build-embeddings.ts';
import { cosine } from '../../memory/embeddings-client.ts';
import { sentenceEncoderInstalled } from '../../config/cache-dir.ts';
import { createSentenceEncoder } from '../../memory/sentence-encoder.ts';
import { loadSentenceModel } from '../../memory/sentence-model.ts';

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

/** Texts cut at the model's 256 tokens: one batch of 16 takes the model hundreds of ms. */
const longTexts = (n: number) =>
  Array.from({ length: n }, (_, i) => `memory ${i}: ${'the quarterly review lists every region and its totals '.repeat(40)}`);

/** Resolves once `n` timers of 1 ms have run one after another, each set when the last ran. */
const timerChain = (n: number) =>
  new Promise<'timers'>((resolve) => {
    let left = n;
    const next = () => (--left === 0 ? resolve('timers') : setTimeout(next, 1));
    setTimeout(next, 1);
  });

describe('the sentence encoder runs on its own thread', () => {
  const modelDir = config.sentenceEncoderDir;

  it('leaves the main event loop free: timers set after the call run while one batch encodes', async () => {
    const encoder = createSentenceEncoder({ modelDir });
    await encoder.ready();
    // Encoding on the calling thread lets at most one timer through per batch (the model runs in one setImmediate).
    const first = await Promise.race([encoder.embed(longTexts(16)).then(() => 'encoded' as const), timerChain(5)]);
    assert.equal(first, 'timers');
  });

  it('gives exactly the vectors of the model run on the calling thread', async () => {
    // Two batches, the order kept across them: short texts padded to the longest, then a long one cut.
    const short = Array.from({ length: 13 }, (_, i) => `memory ${i}: the weekly report lists ${i} open hiring requests.`);
    const texts = ['kilometres', '', 'Invoices are paid within thirty days.', ...short, ...longTexts(1)];
    const model = await loadSentenceModel(modelDir);
    const here: number[][] = [];
    for (let i = 0; i < texts.length; i += 16) {
      const flat = await model.encode(texts.slice(i, i + 16));
      for (let r = 0; r < flat.length / 384; r++) here.push(Array.from(flat.subarray(r * 384, (r + 1) * 384)));
    }
    assert.deepEqual(await createSentenceEncoder({ modelDir }).embed(texts), here);
  });

  it('rejects a call whose signal aborts while it waits with the reason, and serves the next call', async () => {
    const encoder = createSentenceEncoder({ modelDir });
    await encoder.ready();
    const controller = new AbortController();
    const abandoned = encoder.embed(longTexts(64), controller.signal);
    setTimeout(() => controller.abort(new Error('the activity was cancelled')), 10);
    await assert.rejects(abandoned, /the activity was cancelled/);
    const [v] = await encoder.embed(['kilometres']);
    assert.equal(v!.length, 384);
  });

  it('rejects the calls waiting on a thread that crashes with a clear error, and starts a new thread for the next call', async () => {
    const encoder = createSentenceEncoder({ modelDir });
    await encoder.ready();
    // The thread is crashed from outside, as any uncaught error in it would: through the inspector's worker session.
    const session = new Session();
    session.connect();
    try {
      const attached = new Promise<string>((resolve) =>
        session.on('NodeWorker.attachedToWorker', (m) => {
          if (m.params.workerInfo.url.endsWith('/sentence-encoder-thread.ts')) resolve(m.params.sessionId);
        }),
      );
      await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
      const sessionId = await attached;
      const waiting = encoder.embed(longTexts(64));
      const expression = "setImmediate(() => { throw new Error('crashed on purpose') })";
      await session.post('NodeWorker.sendMessageToWorker', {
        sessionId,
        message: JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression } }),
      });
      await assert.rejects(waiting, /the sentence encoder's thread stopped \(crashed on purpose\)/);
    } finally {
      session.disconnect();
    }
    const [v] = await encoder.embed(['kilometres']);
    assert.equal(v!.length, 384);
  });
});
