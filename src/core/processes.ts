/**
 * The runs of this process that ended, by owner id, the latest ENDED_KEPT of them. A run of this
 * very process whose pid is alive may still be over: in a library user's long-lived process, or
 * after it ended on a full disk before it could release what it held in the store. Its holds and
 * claims are then another run's to lapse at once, as a dead process's are; judged by its pid alone
 * they would be kept for good, and a budget would not count what its calls in flight may have cost.
 */
const endedHere = new Set<string>();
/** A run's holds are lapsed by the next run on the store: an id this many runs old has long been let go. */
const ENDED_KEPT = 10_000;

/** `owner` (a run id) is going in this process until the returned function is called. */
export function runGoing(owner: string): () => void {
  return () => {
    endedHere.add(owner);
    if (endedHere.size > ENDED_KEPT) endedHere.delete(endedHere.values().next().value as string);
  };
}

/** Whether the holder `owner` of process `pid` (of this host) is alive: a run of this process only until it ended. */
export function holderAlive(pid: number, owner: string): boolean {
  return pid === process.pid ? !endedHere.has(owner) : isAlive(pid);
}

/** Whether a process of this host is alive (EPERM: it is, and belongs to another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
