import { randomBytes } from 'node:crypto';
import { runDemo } from '../demo/run-demo.ts';
import { buildApi } from '../wiring/build-api.ts';
import { buildWorker } from '../wiring/build-worker.ts';
import { startDemoModel, startEmbeddedExtras } from '../wiring/embedded-extras.ts';
import { modelUnconfigured } from '../config/config.ts';
import { loadConfigOrExit } from '../wiring/process-config.ts';
import { openResources } from '../wiring/resources.ts';

// The embedded stack in one process: Temporal dev server (unless TEMPORAL_ADDRESS), PGlite (unless DATABASE_URL),
// the worker and the API. `--demo` then runs a demo mission through the API and keeps serving. The banner and the
// demo's output go to stdout; log lines go to stderr (readable lines on a terminal, JSON otherwise: LOG_FORMAT).
const demo = process.argv.includes('--demo');
const env: Record<string, string | undefined> = { ...process.env };
const generatedAdminKey = env.CADENZA_ADMIN_KEY ? undefined : `adm_${randomBytes(18).toString('base64url')}`;
env.CADENZA_ADMIN_KEY ??= generatedAdminKey;
// Before the configuration is read: with --demo and no MODEL_API_KEY, the fake model becomes the endpoint.
const fake = await startDemoModel(env, demo);
const config = loadConfigOrExit(env);
// Without SECRETS_MASTER_KEY, a master key is generated once under DATA_DIR; one log line says so.
const resources = await openResources(config, { embeddedSecrets: true });
const { logger } = resources;

const { temporalAddress, uiUrl } = await startEmbeddedExtras(resources, { env, demo, fake });

await buildWorker(resources, { temporalAddress, env });
const api = await buildApi(resources, { temporalAddress, env, ...(uiUrl ? { temporalUiUrl: uiUrl } : {}) });

const banner = [
  `Cadenza is running.`,
  `  Console:         ${api.url}/   (sign in with an API key)`,
  `  API:             ${api.url}/api/v1   (health: ${api.url}/readyz)`,
  `  Temporal:        ${temporalAddress}${uiUrl ? `   Web UI: ${uiUrl}` : ''}`,
  `  Database:        ${resources.database.kind} (${resources.database.where})`,
  `  Model:           ${modelLine()}`,
  generatedAdminKey ? `  Admin key:       ${generatedAdminKey}   (generated; set CADENZA_ADMIN_KEY to choose one)` : '',
  `Stop with Ctrl-C.`,
].filter(Boolean);
console.log(banner.join('\n'));

function modelLine(): string {
  if (fake) return 'built-in fake model server (no MODEL_API_KEY set)';
  const why = modelUnconfigured(config.model);
  if (why) return `NOT CONFIGURED: missions are refused (503 model_unconfigured). ${why}`;
  return `${config.model.provider}${config.model.baseUrl ? ` at ${config.model.baseUrl}` : ''}`;
}

if (demo) {
  try {
    await runDemo({ apiUrl: api.url, adminKey: config.adminKey!, namespace: config.temporal.namespace, ...(uiUrl ? { uiUrl } : {}) });
    console.log('\nThe stack keeps serving; stop it with Ctrl-C.');
  } catch (err) {
    logger.error('demo failed', { err });
    process.exitCode = 1;
  }
}
