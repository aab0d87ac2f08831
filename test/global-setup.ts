import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { wordVectorCache } from '../memory/build-embeddings.ts';
import { ensureWordVectorCache } from '../memory/word-vectors.ts';
import { resolveTemporalCli } from '../temporal/resolve-cli.ts';
import { startDevServer, type DevServer } from '../temporal/dev-server.ts';
import { buildWorkflowBundle } from '../worker/workflow-bundle.ts';
import { freePort } from '../testkit/free-port.ts';

export const DRAINAGE_IN_SECONDS = [
  ...['--dynamic-config-value', 'matching.wv.VersionDrainageStatusVisibilityGracePeriod="1s"'],
  ...['--dynamic-config-value', 'matching.wv.VersionDrainageStatusRefreshInterval="1s"'],
];

// Runs once in the test runner's process for the workflow, integration and browser layers (scripts/test.sh; the
// unit layer runs without it): one real Temporal dev server for every test file (each file uses its own task queues
// and database), and the workflow bundle built once (webpack is the slow part of a worker start).
let server: DevServer | undefined;

export async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-test-'));
  // The local embedding's vocabulary, converted once here rather than by the first test files at the same time.
  await ensureWordVectorCache(wordVectorCache('.data'));
  const bundle = await buildWorkflowBundle();
  const codePath = join(dir, 'workflow-bundle.js');
  writeFileSync(codePath, bundle.code);
  process.env.CADENZA_TEST_BUNDLE = codePath;
  if (!process.env.TEMPORAL_ADDRESS) {
    server = await startDevServer({
      cliPath: resolveTemporalCli(),
      port: await freePort(),
      // A retired worker build shows DRAINED seconds after its last pinned mission closed, not minutes (the server's
      // defaults): the worker-versioning test waits for it, as an operator does before stopping the old build.
      extraArgs: DRAINAGE_IN_SECONDS,
    });
    process.env.TEMPORAL_ADDRESS = server.address;
  }
}

export async function globalTeardown(): Promise<void> {
  await server?.stop();
}
