import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One tool result the TOON bench measures: a published API response (real) or a hand-written one (synthetic). */
export type ToonFixture = { set: 'real' | 'synthetic'; name: string; class: string; source?: string; value: unknown };

const folder = (name: string) => fileURLToPath(new URL(`../bench/fixtures/${name}`, import.meta.url));
const jsonFiles = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ name: basename(f, '.json'), data: JSON.parse(readFileSync(join(dir, f), 'utf8')) as unknown }));

/**
 * The real set (bench/fixtures/api-responses/: `{source: {api, endpoint, url}, class, response}`, each a published
 * example response) first, then the synthetic set (bench/fixtures/toon/, hand-written, classed uniform or irregular).
 */
export function loadToonFixtures(): ToonFixture[] {
  const real = jsonFiles(folder('api-responses')).map(({ name, data }) => {
    const {
      source,
      class: cls,
      response,
    } = data as { source: { api: string; endpoint: string; url: string }; class: string; response: unknown };
    return { set: 'real' as const, name, class: cls, source: `${source.api} ${source.endpoint} (${source.url})`, value: response };
  });
  const synthetic = jsonFiles(folder('toon')).map(({ name, data }) => ({
    set: 'synthetic' as const,
    name,
    class: isUniform(data) ? 'uniform' : 'irregular',
    value: data,
  }));
  return [...real, ...synthetic];
}

/** A result whose bulk is one list of objects sharing their keys: the shape TOON tabulates. */
function isUniform(value: unknown): boolean {
  const lists: unknown[][] = [];
  const visit = (v: unknown) => {
    if (Array.isArray(v)) lists.push(v);
    else if (typeof v === 'object' && v !== null) Object.values(v).forEach(visit);
  };
  visit(value);
  const biggest = lists.sort((a, b) => JSON.stringify(b).length - JSON.stringify(a).length)[0];
  if (!biggest || biggest.length < 3 || JSON.stringify(biggest).length < JSON.stringify(value).length / 2) return false;
  const keys = (o: unknown) =>
    typeof o === 'object' && o !== null && !Array.isArray(o) && Object.values(o).every((x) => typeof x !== 'object' || x === null)
      ? Object.keys(o).sort().join(',')
      : undefined;
  const first = keys(biggest[0]);
  return first !== undefined && biggest.every((o) => keys(o) === first);
}
