/** A job the rate gate dropped because the run is stopping: the request was never sent. */
export class GateStoppedError extends Error {
  constructor() {
    super('the run is stopping; request not started');
    this.name = 'GateStoppedError';
  }
}
