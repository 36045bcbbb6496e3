import { readFileSync } from 'node:fs'

/**
 * Whether a process with this id runs on this machine (one we may not signal counts as alive).
 * A zombie (exited, not yet reaped by its parent: what `kill -9` leaves until a supervisor
 * waits for it) answers `kill(pid, 0)` but runs nothing, so on Linux its state is read first.
 */
export function isProcessAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    const state = linuxState(pid)
    if (state === 'Z' || state === 'X') return false
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** The state letter of `/proc/<pid>/stat`, or undefined when it cannot be read. */
function linuxState(pid: number): string | undefined {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  // "pid (comm) S …": the name may hold spaces and parentheses, the state follows the last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || undefined
}
