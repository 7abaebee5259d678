// Whether every request a killed run sent has been taken in by the sandbox, as the kernel sees the
// sandbox's TCP connections (/proc/net/tcp, Linux). What a process wrote before its SIGKILL is in
// the kernel, delivered, but the sandbox (in the simulation's process) reads it only as fast as its
// event loop gets to it: seed 42's night 295 killed a child with 23 connections not yet accepted,
// each holding a whole request; by the end of the fixed 100 ms wait after the kill 14 were taken in,
// and the rest were taken in (and charged) on night 296, on that night's clock and balance (`ss -tanoi`
// at the kill and at the wait's start and end). So a night that killed a run waits until nothing is left on its way.
import fs from 'node:fs';

// /proc/net/tcp's states (include/net/tcp_states.h).
const SYN_SENT = '02';
const SYN_RECV = '03';
const FIN_WAIT1 = '04';
const LISTEN = '0A';

/** The sandbox's connections, one line each, as the kernel lists them; undefined where it cannot (not Linux). */
function connections() {
  try {
    return fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).filter(Boolean);
  } catch {
    return undefined;
  }
}

const portOf = (address) => Number.parseInt(address.split(':')[1], 16);

/**
 * True while something is on its way to the sandbox on `port`: a connection not yet accepted, or
 * data not yet read by it, or data a client (a dead one included) has not yet had acknowledged.
 * Undefined when the kernel's table cannot be read.
 */
export function inFlightTo(port) {
  const lines = connections();
  if (lines === undefined) return undefined;
  return lines.some((line) => {
    const [, local, remote, state, queues] = line.trim().split(/\s+/);
    const [tx, rx] = queues.split(':').map((hex) => Number.parseInt(hex, 16));
    if (portOf(local) === port) return state === SYN_RECV || rx > 0 || (state === LISTEN && rx > 0);
    if (portOf(remote) === port) return state === SYN_SENT || state === FIN_WAIT1 || tx > 0;
    return false;
  });
}
