import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import express, { type Express } from 'express';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { errorMiddleware, HttpError } from './errors.ts';
import { createEventRelay, type EventRelay } from './event-relay.ts';
import { adminRouter } from './routes/admin.ts';
import { missionsRouter } from './routes/missions.ts';
import { skillsRouter } from './routes/skills.ts';
import { activityRouter } from './routes/activity.ts';
import { integrationsRouter } from './routes/integrations.ts';
import { memoriesRouter } from './routes/memories.ts';
import { profileRouter } from './routes/profile.ts';
import { rejectNul } from './reject-nul.ts';

/** What the HTTP edge needs; built once by the process's composition root. */
export type AppDeps = {
  db: Kysely<Database>;
  temporal: Client;
  config: Pick<Config, 'adminKey' | 'bodyLimitBytes' | 'maxTurnsCap' | 'temporal' | 'model' | 'budgets' | 'embeddings' | 'skills'>;
  logger: Logger;
  /** The installed apps, for checks at authoring time (a skill naming a tool that does not exist). */
  registry?: AppRegistry;
  /** Embeddings for memories written and searched through the API; from `config.embeddings` when absent. */
  embeddings?: EmbeddingsClient | undefined;
  relay?: EventRelay;
  sseKeepAliveMs?: number;
};

/** The Express app (does not listen: the caller decides the port, tests use port 0). */
export function createApp(deps: AppDeps): Express & { relay: EventRelay } {
  const app = express();
  const relay = deps.relay ?? createEventRelay({ temporal: deps.temporal, logger: deps.logger });
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use((req, res, next) => {
    const incoming = req.get('x-request-id');
    res.locals.requestId = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.set('x-request-id', res.locals.requestId);
    next();
  });
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    const [database, temporal] = await Promise.all([
      sql`select 1`.execute(deps.db).then(
        () => true,
        () => false,
      ),
      deps.temporal.workflowService.getSystemInfo({}).then(
        () => true,
        () => false,
      ),
    ]);
    res
      .status(database && temporal ? 200 : 503)
      .json({ status: database && temporal ? 'ok' : 'unavailable', checks: { database, temporal } });
  });
  const limit = deps.config.bodyLimitBytes;
  // SKILL.md bodies are read as raw bytes (decoded in the router) so a byte-order mark survives: exports are verbatim.
  app.use('/api/v1', express.json({ limit }), express.raw({ type: ['text/markdown', 'text/plain'], limit }), rejectNul);
  app.use('/api/v1/admin', adminRouter(deps));
  const embeddings = deps.embeddings ?? (deps.config.embeddings ? createEmbeddingsClient(deps.config.embeddings) : undefined);
  app.use('/api/v1/missions', missionsRouter({ ...deps, relay, embeddings }));
  app.use('/api/v1/skills', skillsRouter({ ...deps, embeddings }));
  app.use('/api/v1/profile', profileRouter(deps));
  app.use('/api/v1/memories', memoriesRouter({ ...deps, embeddings }));
  app.use('/api/v1/integrations', integrationsRouter(deps));
  app.use('/api/v1/activity', activityRouter(deps));
  app.use(() => {
    throw new HttpError('not_found', 'no such route');
  });
  app.use(errorMiddleware(deps.logger));
  return Object.assign(app, { relay });
}
