import { readFileSync } from 'node:fs';

/**
 * Peak RSS of this process image, in bytes. Not resourceUsage().maxRSS: Linux
 * carries ru_maxrss over fork and exec, so a child would report its parent's
 * peak. VmHWM starts afresh at exec.
 */
export function maxRssBytes(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}
