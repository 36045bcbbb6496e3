import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import sharp from 'sharp'
import {
  AUTHORIZATION,
  fmt,
  inTempDir,
  type Profile,
  ueditorConfig,
  using,
  withCpu,
} from '../context.js'
import { load } from '../load.js'
import { startBare, startUeditor } from '../processes.js'
import type { Row } from '../report.js'

const CONNECTIONS = 4
const IMAGES = 5
// A catch takes about a second on a busy machine: even --smoke needs a few of them.
const MIN_SECONDS = 5

/** A real 320×240 photo-like PNG, as a pasted article links it. */
function photo(): Promise<Buffer> {
  return sharp({
    create: {
      width: 320,
      height: 240,
      channels: 3,
      background: { r: 128, g: 128, b: 128 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .png()
    .toBuffer()
}

/**
 * catch of IMAGES images from a loopback origin with the address guard on: the origin is
 * allow-listed the documented way, `catcher.allowHosts`.
 */
export function catchScenario(p: Profile): Promise<Row[]> {
  return inTempDir(async (dir) => {
    const image = join(dir, 'origin.png')
    await writeFile(image, await photo())
    return using(startBare(['bytes', image, 'image/png']), async (origin) => {
      const host = new URL(origin.url).host
      const config = ueditorConfig(join(dir, 'data'), { catcher: { allowHosts: [host] } })
      return using(startUeditor(dir, config), async (server) => {
        const body = new URLSearchParams()
        for (let i = 0; i < IMAGES; i++) body.append('source[]', `${origin.url}/photos/${i}.png`)
        const base = {
          url: `${server.url}/ueditor?action=catch`,
          connections: CONNECTIONS,
          method: 'POST' as const,
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...AUTHORIZATION },
          body: body.toString(),
          expect: (text: string) => text.split('"state":"SUCCESS"').length === IMAGES + 2,
        }
        if (p.warmSeconds > 0) await load({ ...base, seconds: p.warmSeconds })
        const { result, cpuMicros } = await withCpu(server, () =>
          load({ ...base, seconds: Math.max(p.seconds, MIN_SECONDS) }),
        )
        return [
          {
            scenario: `catch, ${IMAGES} images from a loopback origin, guard on, ${CONNECTIONS} connections`,
            server: `${fmt(result.perSecond, 1)} catches/s, ${fmt(cpuMicros / result.requests / 1000, 1)} ms CPU/catch, p99 ${fmt(result.p99Ms)} ms`,
            figures: {
              perSecond: result.perSecond,
              cpuMicrosPerCatch: cpuMicros / result.requests,
              p99Ms: result.p99Ms,
            },
          },
        ]
      })
    })
  })
}
