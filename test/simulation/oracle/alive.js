// Whether a process of this host is alive (signal 0): how a killed run's holds are told from a live one's.
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
