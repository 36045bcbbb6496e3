import { spawn } from 'node:child_process'
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { UeError } from '../shared/errors.js'

import { convertsOffline, UNSHARE } from '../shared/soffice-path.js'

export { convertsOffline, findSoffice } from '../shared/soffice-path.js'

const CAN_UNSHARE = convertsOffline

/**
 * Runs `soffice --headless --convert-to svg` on `input` inside `workDir` (its own profile there, so
 * conversions never share a LibreOffice instance), in its own process group, killed whole at
 * `timeoutMs`. Answers the SVG text, at most `maxBytes`.
 */
export async function sofficeToSvg(
  soffice: string,
  input: string,
  workDir: string,
  timeoutMs: number,
  maxBytes: number,
): Promise<string> {
  await runSoffice(soffice, input, workDir, {
    convertTo: 'svg:draw_svg_Export',
    timeoutMs,
    tooLong: () => new UeError('UE_CONVERSION_FAILED', { detail: 'conversion took too long' }),
  })
  const name = (input.split('/').pop() ?? '').replace(/\.[^.]*$/, '.svg')
  let fh: Awaited<ReturnType<typeof open>>
  try {
    fh = await open(join(workDir, 'out', name), 'r')
  } catch (cause) {
    throw new UeError('UE_CONVERSION_FAILED', { detail: 'no drawing came out', cause })
  }
  try {
    const { size } = await fh.stat()
    if (size > maxBytes) throw new UeError('UE_IMAGE_TOO_LARGE', { detail: 'drawing too large' })
    return (await fh.readFile()).toString('utf8')
  } finally {
    await fh.close()
  }
}

/**
 * One `soffice --headless --convert-to <convertTo>` of `input` inside `workDir`: its own profile
 * there (conversions never share a LibreOffice instance), no network where `unshare -n` can run,
 * its own process group killed whole at `timeoutMs` (refused with `tooLong()`). The result is
 * written to `<workDir>/out/<input's name>.<new extension>`.
 */
export async function runSoffice(
  soffice: string,
  input: string,
  workDir: string,
  o: { convertTo: string; timeoutMs: number; tooLong: () => UeError },
): Promise<void> {
  const args = [
    '--headless',
    '--norestore',
    '--nolockcheck',
    '--nodefault',
    `-env:UserInstallation=${pathToFileURL(join(workDir, 'profile')).href}`,
    '--convert-to',
    o.convertTo,
    '--outdir',
    join(workDir, 'out'),
    input,
  ]
  const [cmd, argv] = CAN_UNSHARE ? [UNSHARE as string, ['-n', soffice, ...args]] : [soffice, args]
  await new Promise<void>((resolve, reject) => {
    const child = spawn(cmd, argv, {
      cwd: workDir,
      detached: true,
      stdio: 'ignore',
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: workDir,
        TMPDIR: workDir,
        LANG: 'C.UTF-8',
      },
    })
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL')
      } catch {}
    }
    const timer = setTimeout(() => {
      kill()
      reject(o.tooLong())
    }, o.timeoutMs)
    child.on('error', (cause) => {
      clearTimeout(timer)
      reject(new UeError('UE_CONVERTER_UNAVAILABLE', { cause }))
    })
    child.on('exit', () => {
      clearTimeout(timer)
      // soffice may leave helpers behind in its group: none outlives the conversion.
      kill()
      resolve()
    })
  })
}
