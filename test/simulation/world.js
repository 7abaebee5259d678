// The simulation's world: its folders (the store and the outputs each on a small tmpfs of its own
// where this user may mount one, so that a night can fill either disk for real), the sandbox with
// drift and its books, and the environment the runs read.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';

/** A token nobody could take for a real one, the same in every run of the simulation. */
const TOKEN = 'simulation-token-0123456789abcdef';
/** Each disk's ordinary size: far more than a year of nights needs. */
const ROOMY = 256 * 1024 * 1024;

/** A tmpfs at `dir`, or false where this user may not mount one. */
function mountTmpfs(dir, bytes) {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

class Disk {
  constructor(dir) {
    this.dir = dir;
    fs.mkdirSync(dir, { recursive: true });
    this.mounted = mountTmpfs(dir, ROOMY);
  }

  /** Bytes in use (a tmpfs counts whole pages). */
  used() {
    const s = fs.statfsSync(this.dir);
    return (s.blocks - s.bfree) * s.bsize;
  }

  /** Leaves `room` bytes free: the next writes past it fail with ENOSPC. */
  fill(room) {
    const size = Math.ceil((this.used() + room) / 4096) * 4096 + 4096;
    execFileSync('mount', ['-o', `remount,size=${size}`, this.dir], { stdio: 'ignore' });
    this.full = true;
  }

  roomy() {
    if (this.mounted && this.full) execFileSync('mount', ['-o', `remount,size=${ROOMY}`, this.dir], { stdio: 'ignore' });
    this.full = false;
  }

  /** Unmounts the tmpfs; `keep`: its files are copied to `<dir>.kept` first (the tmpfs takes them with it). */
  unmount(keep) {
    if (!this.mounted) return;
    if (keep) fs.cpSync(this.dir, `${this.dir}.kept`, { recursive: true });
    execFileSync('umount', ['-l', this.dir], { stdio: 'ignore' });
    this.mounted = false;
  }
}

export async function openWorld(world, { keep = false } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `lead-enrich-simulation-${world.seed}-`));
  const disks = { store: new Disk(path.join(root, 'store')), outputs: new Disk(path.join(root, 'out')) };
  const input = path.join(root, 'in');
  const home = path.join(root, 'home');
  for (const dir of [input, home]) fs.mkdirSync(dir);
  const sandbox = await startSandbox({ token: TOKEN, rpm: 60_000, drift: world.drift, answerLog: true, credits: world.balance, seed: world.seed });
  return {
    root,
    disks,
    sandbox,
    files: { store: path.join(disks.store.dir, 'store.sqlite'), contacts: path.join(input, 'contacts.csv'), out: (name) => path.join(disks.outputs.dir, name) },
    env: { HOME: home, LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: TOKEN },
    canFillDisks: disks.store.mounted && disks.outputs.mounted,
    /** The shortest run in this process so far, in real ms (night.js: a run across midnight starts a share of it before). */
    shortestRunMs: 40,
    async close() {
      await sandbox.close();
      for (const disk of Object.values(disks)) disk.unmount(keep);
      if (!keep) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
