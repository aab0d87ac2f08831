/** What the `cadenza` command's exit status means; scripts may rely on these. */
export const EXIT = {
  ok: 0,
  /** `run`: the mission ended failed. */
  missionFailed: 1,
  /** Bad arguments or options (commander's own errors too). */
  usage: 2,
  /** 401 or 403: no key, a wrong key, or a key without the capability. */
  auth: 3,
  /** 404: no such mission, skill, key or tool call (or not yours). */
  notFound: 4,
  /** Any other refusal of the API: 400, 409, 413, 415, 422, 429. */
  refused: 5,
  /** The API could not be reached or answered 5xx. */
  unavailable: 6,
  /** `run`: the mission ended cancelled. */
  missionCancelled: 7,
  /** `run`: interrupted by Ctrl-C and detached; the mission keeps running. */
  detached: 130,
} as const;

/** A failure the CLI reports in one line and exits with. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** The exit status of an API error status. */
export function exitCodeOf(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status >= 500) return EXIT.unavailable;
  return EXIT.refused;
}
