import type { SkillScript } from '../contracts/skill-spec.ts';
import { parsePostcondition } from './postconditions.ts';
import { runtimeOf, type Runtime } from './runtimes.ts';

/** A script as the dispatcher runs it: its name, its path in the bundle, its runtime and its postconditions. */
export type RunnableScript = { name: string; path: string; runtime: Runtime; postconditions: string[] };

/**
 * The script a call names: a declared script by name, or else a code file under the bundle's `scripts/` folder by
 * its path (real-world skills ship scripts without declaring them). A string says why there is none.
 */
export function findScript(declared: SkillScript[], bundlePaths: string[], requested: string): RunnableScript | string {
  const entry = declared.find((s) => s.name === requested);
  const path = entry?.path ?? (bundlePaths.includes(requested) && requested.startsWith('scripts/') ? requested : undefined);
  if (path === undefined) {
    const names = [...declared.map((s) => s.name), ...bundlePaths.filter((p) => p.startsWith('scripts/') && runtimeOf(p))];
    return `no script ${JSON.stringify(requested)}; this skill has ${names.length > 0 ? names.join(', ') : 'no scripts'}`;
  }
  const runtime = runtimeOf(path, entry?.runtime);
  if (!runtime) return `cannot tell how to run ${path}: declare its runtime (python or node) or use a .py, .js, .mjs or .cjs file`;
  return { name: entry?.name ?? path, path, runtime, postconditions: entry?.postconditions ?? [] };
}

/** Postconditions the grammar cannot read, one problem each (authoring refuses them; imports keep them as warnings). */
export function postconditionProblems(scripts: SkillScript[]): Array<{ field: string; message: string }> {
  return scripts.flatMap((script) =>
    (script.postconditions ?? []).flatMap((expression) => {
      const parsed = parsePostcondition(expression);
      return typeof parsed === 'string' ? [{ field: 'scripts', message: `${script.name}: postcondition '${expression}' ${parsed}` }] : [];
    }),
  );
}
