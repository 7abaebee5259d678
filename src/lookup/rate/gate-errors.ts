/** A job the rate gate dropped because the run is stopping: the request was never sent. */
export class GateStoppedError extends Error {
  constructor() {
    super('the run is stopping; request not started');
    this.name = 'GateStoppedError';
  }
}

/**
 * A granted job that sent nothing after all (the API went down while it waited for its slot:
 * request-path/breaker.ts). The gate gives its place in the window back: the server never saw it.
 */
export class NotSentError extends Error {}
