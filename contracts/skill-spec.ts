/** What Cadenza runs a skill by: parsed once from its SKILL.md by `skills/`, stored typed with each version. */
import type { Tier } from './model.ts';

/** A script a skill declares: a name (tool-name charset) and its path inside the skill's bundle. */
export type SkillScript = {
  name: string;
  path: string;
  description?: string | undefined;
  /** How to run it; from the file extension when absent. */
  runtime?: 'python' | 'node' | undefined;
  /** Checks on its JSON output in the scripts grammar (`rows.length > 0`). */
  postconditions?: string[] | undefined;
};

/** A skill version's effective settings; every reader takes these values, never the raw frontmatter. */
export type SkillSpec = {
  /** The model tier (`DEFAULT_TIER` when the skill names none). */
  tier: Tier;
  /** Qualified tool names `<app-id>.<tool-name>`, deduplicated, in the order written. */
  allowedTools: string[];
  /** The skill's own turn limit; absent when it sets none. */
  maxTurns?: number | undefined;
  /** Example asks that should load the skill (discovery). */
  triggers: string[];
  /** Example asks that look alike but should not load it (discovery). */
  notFor: string[];
  /** Declared scripts, each checked against the bundle. */
  scripts: SkillScript[];
  /** Tools (of `allowedTools`, `<app-id>.*` for a whole app) whose calls a person approves first, beyond app.yml's. */
  approval: string[];
  /** A session skill: its missions go idle after each answer and continue with the next message (`cadenza-session`). */
  session?: boolean | undefined;
  /** The skills its missions may hand work to with the `delegate` tool (`cadenza-delegates`); absent: none. */
  delegates?: string[] | undefined;
  /** The JSON Schema its missions' answers must match (`cadenza-output-schema`), unless the start gives its own. */
  outputSchema?: Record<string, unknown> | undefined;
};
