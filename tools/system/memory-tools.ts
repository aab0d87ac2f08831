import { insertMemory } from '../../db/memories.ts';
import { embedForStorage, retrieveMemories } from '../../memory/retrieve.ts';
import type { SystemTool, SystemToolContext } from './system-tool.ts';

const owner = (ctx: SystemToolContext) => ({ tenantId: ctx.mission.tenant_id, userId: ctx.mission.user_id });

/** `save_memory`: stores a fact for later missions of this user, in this mission's workspace. */
export const saveMemoryTool: SystemTool = {
  name: 'save_memory',
  description:
    "Saves a fact worth remembering for the user's later missions (a preference, a decision, a result). Keep it short and self-contained.",
  inputSchema: {
    type: 'object',
    properties: {
      content: { type: 'string', minLength: 1, maxLength: 4000, description: 'The fact, in one or a few sentences.' },
      tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 10 },
    },
    required: ['content'],
    additionalProperties: false,
  },
  timeoutS: 20,
  async run(input, ctx) {
    const content = String(input.content).trim();
    if (!content) return { ok: false, error: 'content must not be blank' };
    const embedding = await embedForStorage({ db: ctx.db, embeddings: ctx.embeddings, logger: ctx.logger }, content);
    const { row } = await insertMemory(ctx.db, {
      owner: owner(ctx),
      workspaceCode: ctx.mission.workspace_code,
      content,
      tags: (input.tags as string[] | undefined) ?? [],
      source: 'tool',
      missionId: ctx.mission.id,
      // A retried call of the same tool use stores nothing twice.
      ...(ctx.toolUseId ? { sourceKey: `mission/${ctx.mission.id}/tool/${ctx.toolUseId}` } : {}),
      embedding,
    });
    return { ok: true, result: { saved: true, id: row.id } };
  },
};

/** `search_memory`: the user's memories most relevant to a query (hybrid retrieval, a few non-redundant ones). */
export const searchMemoryTool: SystemTool = {
  name: 'search_memory',
  description: "Searches the user's memories (their preferences, facts and earlier missions' results) for a query.",
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 1000 },
      limit: { type: 'integer', minimum: 1, maximum: 10, description: 'At most this many memories (default 5).' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  timeoutS: 20,
  async run(input, ctx) {
    const scope = { owner: owner(ctx), workspaceCode: ctx.mission.workspace_code };
    const rows = await retrieveMemories(
      { db: ctx.db, embeddings: ctx.embeddings, vectors: ctx.vectors, logger: ctx.logger },
      scope,
      String(input.query),
      Number(input.limit ?? 5),
    );
    return { ok: true, result: { memories: rows.map((r) => ({ id: r.id, content: r.content, tags: r.tags, createdAt: r.created_at })) } };
  },
};
