/** Trivial activities for the bare workflow: no I/O, tiny payloads. */
export const bareActivities = {
  async prepare(turns: number): Promise<{ turns: number }> {
    return { turns };
  },
  async model(turn: number): Promise<{ stopReason: string; turn: number }> {
    return { stopReason: 'tool_use', turn };
  },
  async tool(turn: number): Promise<{ status: string; turn: number }> {
    return { status: 'completed', turn };
  },
  async complete(_turns: number): Promise<void> {},
};

export type BareActivities = typeof bareActivities;
