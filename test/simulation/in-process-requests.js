// SIM_DEBUG=1: the requests this process's own runs sent during a night (node:diagnostics_channel),
// printed under a failing night. A charge that no run of the night can have made (seed 42's night
// 296, docs/development.md) is then told apart: sent from this process (an earlier run's leftover,
// with the time it left), or not (a child's, read late).
import diagnostics from 'node:diagnostics_channel';

const sent = [];
let nightStart = 0;

if (process.env.SIM_DEBUG) {
  diagnostics.subscribe('http.client.request.start', ({ request }) => {
    if (request.path.includes('/account/')) return;
    sent.push({ at: Date.now(), method: request.method, path: request.path });
  });
}

/** A night begins: what was sent before it is dropped. */
export function nightBegins() {
  sent.length = 0;
  nightStart = Date.now();
}

/** The night's requests from this process, as lines (none without SIM_DEBUG). */
export function inProcessLines() {
  return sent.map((r) => `${r.at - nightStart} ms into the night (real time): ${r.method} ${r.path}`);
}
