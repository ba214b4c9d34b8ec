// CPU time of another process, read from Linux's /proc: what a transform
// process used, which the parent's own counters do not include.

import { readFileSync } from 'node:fs';

/** CPU seconds a process has used (utime + stime), or 0 once it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks: 100 per second on Linux
  } catch {
    return 0;
  }
}
