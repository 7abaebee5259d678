// Runs the integrity check off the main thread, so that `store check` can say how long it has been
// reading a big store (SQLite's check is one synchronous call).
import { parentPort, workerData } from 'node:worker_threads';
import { checkStore } from '../store/store-check.js';

parentPort!.postMessage(checkStore((workerData as { file: string }).file));
