import { z } from 'zod';
import type { Capability } from '../../db/api-keys.ts';

/** Who may call a route: anyone, the admin key, or a user key carrying every listed capability (`orAdmin`: or the admin key). */
export type Access = 'public' | 'admin' | { capabilities: Capability[]; orAdmin?: true };

/** A response other than JSON: its media type and what the body is (`none` for an empty 204). */
export type MediaReply =
  | { media: 'none' }
  | { media: string; body: 'text' | 'binary'; description?: string }
  | {
      media: 'text/event-stream';
      body: 'sse';
      description: string;
      /** The `data` schema of each durable event type (with an `id`) and of each live one (without). */
      events: Record<string, z.ZodType>;
      live: Record<string, z.ZodType>;
    };

/** One route's documentation, declared next to the route: the same zod schemas its `validate` calls use. */
export type RouteDoc = {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  /** Express form (`/:id/cancel`), relative to its group's prefix. */
  path: string;
  summary: string;
  access: Access;
  /** Path parameters; each `:name` not in it is a plain string. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** A JSON body, or bodies by media type (`binary` for a zip, `text` for SKILL.md). */
  body?: z.ZodType | Record<string, z.ZodType | 'text' | 'binary'>;
  /** Success replies by status (errors are the shared `Error` shape, documented once as the default). */
  responses: Record<number, z.ZodType | MediaReply>;
  description?: string;
};

/** The docs of one router, with the prefix it is mounted at. */
export type RouteGroup = { prefix: string; tag: string; routes: RouteDoc[] };

export const routeGroup = (prefix: string, tag: string, routes: RouteDoc[]): RouteGroup => ({ prefix, tag, routes });

/** The error every failure answers with (server/errors.ts). */
export const errorSchema = z.object({
  error: z.looseObject({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

/** A timestamp as JSON carries it. */
export const timestamp = z.iso.datetime({ offset: true });

/** A cursor-paginated list of `item`. */
export const page = (item: z.ZodType) => z.looseObject({ items: z.array(item), nextCursor: z.string().nullable() });
