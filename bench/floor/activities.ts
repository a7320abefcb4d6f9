/** The local activity of the floor's second workflow: it does nothing, so what it costs is the SDK's alone. */
export const floorActivities = {
  async nothing(): Promise<string> {
    return 'done';
  },
};
