import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { TestStack } from '../../testkit/test-stack.ts';
import { buildZip } from '../../testkit/zip-builder.ts';

export const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Calls of the skills API as a client sends them: SKILL.md as text/markdown, folders as application/zip. */
/** `current` (the stack) and `defaultKey` are read at each call, so the client can be made before the stack starts. */
export function skillsHttp(current: () => TestStack, defaultKey: () => string) {
  return {
    post: (path: string, o: { key?: string; md?: string; zip?: Buffer; json?: unknown } = {}) =>
      fetch(`${current().url}/api/v1/skills${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${o.key ?? defaultKey()}`,
          ...(o.zip
            ? { 'content-type': 'application/zip' }
            : o.md !== undefined
              ? { 'content-type': 'text/markdown' }
              : o.json
                ? { 'content-type': 'application/json' }
                : {}),
        },
        ...(o.zip ? { body: o.zip } : o.md !== undefined ? { body: o.md } : o.json ? { body: JSON.stringify(o.json) } : {}),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as any })), // eslint-disable-line @typescript-eslint/no-explicit-any
    get: (path: string, key = defaultKey()) => current().api.request('GET', `/api/v1/skills${path}`, { key }),
    async bytesOf(path: string, key = defaultKey()) {
      const res = await fetch(`${current().url}/api/v1/skills${path}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
    },
    /** How many skills, versions and bundles are stored: a refused upload must leave these unchanged. */
    async counts() {
      const { rows } = await sql<{ skills: number; bundles: number; versions: number }>`
        select (select count(*)::int from skills) as skills, (select count(*)::int from skill_bundles) as bundles,
               (select count(*)::int from skill_versions) as versions`.execute(current().db);
      return rows[0]!;
    },
  };
}

/** A skill folder zipped as an archiver would (deflated, folder at the top). */
export const folderZip = (folder: string, files: Record<string, string | Buffer>) =>
  buildZip(Object.entries(files).map(([path, data]) => ({ path: `${folder}/${path}`, data, deflate: true })));
