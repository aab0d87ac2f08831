/** The script factory's vocabulary, shared by the workflow, the activities and the fake model server. */

/** The system tool that starts the factory; the mission workflow runs it as a child workflow, never as an activity. */
export const CREATE_SCRIPT = 'create_script';

/** The first words of every factory prompt's system text: how the fake model server tells factory prompts apart. */
export const FACTORY_PROMPT_MARKER = 'You are the Cadenza script factory.';

/** Why the factory stopped: every postcondition passed, the same error twice in a row, or the attempt limit. */
export type FactoryStop = 'converged' | 'repeated_error' | 'attempt_limit';
