// SIM_DEBUG=1, loaded into a child run with `node --import`: every lookup it sends, with its pid,
// the real time and the local port of its connection, appended to the parent's file (SIM_CHILD_LOG;
// in-process-requests.js reads it under a failing night).
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';

const file = process.env.SIM_CHILD_LOG;
if (file) {
  diagnostics.subscribe('http.client.request.start', ({ request }) => {
    if (request.path.includes('/account/')) return;
    const log = (port) =>
      fs.appendFileSync(
        file,
        `${JSON.stringify({ pid: process.pid, at: Math.round(performance.timeOrigin + performance.now()), path: request.path, port })}\n`,
      );
    if (request.socket) log(request.socket.localPort);
    else request.once('socket', (socket) => (socket.localPort ? log(socket.localPort) : socket.once('connect', () => log(socket.localPort))));
  });
}
