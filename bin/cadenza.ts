import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { demoBrain } from '../demo/demo-brain.ts';
import { startDemoToolServer } from '../demo/demo-tool-server.ts';
import { runDemo } from '../demo/run-demo.ts';
import { startFakeModelServer } from '../fake-model/fake-model-server.ts';
import { startDevServer } from '../temporal/dev-server.ts';
import { resolveTemporalCli } from '../temporal/resolve-cli.ts';
import { buildApi } from '../wiring/build-api.ts';
import { buildWorker } from '../wiring/build-worker.ts';
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
// --demo without MODEL_API_KEY: the built-in fake model server (the real Anthropic protocol over HTTP) becomes the model
// endpoint before the configuration is read, so the worker calls it and the API knows missions can run.
const fake = demo && !env.MODEL_API_KEY?.trim() ? await startFakeModelServer() : undefined;
if (fake) {
  fake.setHandler(demoBrain);
  Object.assign(env, { MODEL_PROVIDER: 'anthropic', MODEL_BASE_URL: fake.anthropicBaseUrl, MODEL_API_KEY: 'fake' });
}
const config = loadConfigOrExit(env);
// Without SECRETS_MASTER_KEY, a master key is generated once under DATA_DIR; one log line says so.
const resources = await openResources(config, { embeddedSecrets: true });
const { logger, shutdown } = resources;

let temporalAddress = config.temporal.address;
let uiUrl: string | undefined;
if (!temporalAddress) {
  const dev = await startDevServer({
    cliPath: resolveTemporalCli(env),
    port: config.temporal.devPort,
    uiPort: config.temporal.uiPort,
    dbFile: join(config.dataDir, 'temporal.db'),
  });
  shutdown.add('temporal dev server', () => dev.stop());
  temporalAddress = dev.address;
  uiUrl = dev.uiUrl;
}

if (fake) {
  shutdown.add('fake model server', () => fake.close());
  logger.info('no MODEL_API_KEY: the demo uses the built-in fake model server (real Anthropic protocol over HTTP)', { url: fake.url });
}
if (demo) {
  const tools = await startDemoToolServer();
  shutdown.add('demo tool server', () => tools.close());
  env.WEATHER_TOOLS_URL = tools.url;
}

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
