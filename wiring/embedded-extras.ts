import { join } from 'node:path';
import { demoBrain } from '../demo/demo-brain.ts';
import { startDemoToolServer } from '../demo/demo-tool-server.ts';
import { startFakeModelServer, type FakeModelServer } from '../fake-model/fake-model-server.ts';
import { startDevServer } from '../temporal/dev-server.ts';
import { resolveTemporalCli } from '../temporal/resolve-cli.ts';
import type { Resources } from './resources.ts';

/**
 * `--demo` without MODEL_API_KEY: the built-in fake model server (the real Anthropic protocol over HTTP) becomes the
 * model endpoint in `env`, before the configuration is read, so the worker calls it and the API knows missions can run.
 */
export async function startDemoModel(env: Record<string, string | undefined>, demo: boolean): Promise<FakeModelServer | undefined> {
  if (!demo || env.MODEL_API_KEY?.trim()) return undefined;
  const fake = await startFakeModelServer();
  fake.setHandler(demoBrain);
  Object.assign(env, { MODEL_PROVIDER: 'anthropic', MODEL_BASE_URL: fake.anthropicBaseUrl, MODEL_API_KEY: 'fake' });
  return fake;
}

/**
 * What the embedded stack adds around the API and the worker: the Temporal dev server (unless TEMPORAL_ADDRESS), the
 * demo's tool server (its URL in `env` for the weather tools) and the fake model's clean-up; each stops on shutdown.
 */
export async function startEmbeddedExtras(
  res: Resources,
  opts: { env: Record<string, string | undefined>; demo: boolean; fake: FakeModelServer | undefined },
): Promise<{ temporalAddress: string; uiUrl: string | undefined }> {
  const { config, logger, shutdown } = res;
  let temporalAddress = config.temporal.address;
  let uiUrl: string | undefined;
  if (!temporalAddress) {
    const dev = await startDevServer({
      cliPath: resolveTemporalCli(opts.env),
      port: config.temporal.devPort,
      uiPort: config.temporal.uiPort,
      dbFile: join(config.dataDir, 'temporal.db'),
    });
    shutdown.add('temporal dev server', () => dev.stop());
    temporalAddress = dev.address;
    uiUrl = dev.uiUrl;
  }
  const { fake } = opts;
  if (fake) {
    shutdown.add('fake model server', () => fake.close());
    logger.info('no MODEL_API_KEY: the demo uses the built-in fake model server (real Anthropic protocol over HTTP)', { url: fake.url });
  }
  if (opts.demo) {
    const tools = await startDemoToolServer();
    shutdown.add('demo tool server', () => tools.close());
    opts.env.WEATHER_TOOLS_URL = tools.url;
  }
  return { temporalAddress, uiUrl };
}
