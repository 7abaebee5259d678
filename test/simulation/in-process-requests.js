// SIM_DEBUG=1: the requests this process's own runs sent during a night, and the requests the
// sandbox took in (node:diagnostics_channel), printed under a failing night. A charge that no run
// of the night can have made (seed 42's night 296, docs/development.md) is then told apart: sent
// from this process (an earlier run's leftover, with the time it left), or from a child (the
// children log theirs to a file, child-requests.js: which one, when it sent it, from which port).
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import { realNow } from './clock.js';

const sent = [];
const served = [];
const accepted = new WeakMap();
let nightStart = 0;

/** Where the children write the requests they send (SIM_DEBUG=1). */
export const CHILD_LOG = process.env.SIM_DEBUG ? `${process.env.TMPDIR ?? '/tmp'}/sim-child-requests-${process.pid}.log` : undefined;

if (process.env.SIM_DEBUG) {
  diagnostics.subscribe('http.client.request.start', ({ request }) => {
    if (request.path.includes('/account/')) return;
    sent.push({ at: realNow(), method: request.method, path: request.path });
  });
  diagnostics.subscribe('net.server.socket', ({ socket }) => accepted.set(socket, realNow()));
  diagnostics.subscribe('http.server.request.start', ({ request, socket }) => {
    if (request.url.includes('/account/')) return;
    served.push({ at: realNow(), path: request.url, port: socket.remotePort, acceptedAt: accepted.get(socket) });
  });
}

/** A night begins: what was sent before it is dropped. */
export function nightBegins() {
  sent.length = 0;
  served.length = 0;
  nightStart = realNow();
}

function childLines() {
  try {
    return fs
      .readFileSync(CHILD_LOG, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

/** The night's requests from this process and those the sandbox took in, as lines (none without SIM_DEBUG). */
export function inProcessLines() {
  const fromChildren = childLines();
  const t = (at) => (at === undefined ? '?' : `${at - nightStart} ms`);
  const lines = sent.map((r) => `sent from this process ${t(r.at)} into the night (real time): ${r.method} ${r.path}`);
  for (const r of served) {
    const child = fromChildren.filter((c) => c.port === r.port || c.path === r.path).at(-1);
    const who = child ? `child ${child.pid} sent it at ${t(child.at)} from port ${child.port}` : 'no child logged it';
    lines.push(`taken in by the sandbox ${t(r.at)}: ${r.path} from port ${r.port}, connection accepted ${t(r.acceptedAt)}; ${who}`);
  }
  return lines;
}
