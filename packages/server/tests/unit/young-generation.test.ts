import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { test } from '../helpers/test.js'

const MODULE = new URL('../../src/standalone/young-generation.js', import.meta.url).href
const MB = 1024 * 1024

/**
 * The young generation's size (MB) in a new Node process that calls `holdYoungGeneration` with
 * `args`, keeps 64 MB of small objects alive, then (with `release`) lets it grow and keeps 64 MB
 * more: what a start, then a load, do to it.
 */
async function youngGenerationAfter(args: string, release: boolean): Promise<number[]> {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8'
    import { holdYoungGeneration } from '${MODULE}'
    const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size
    const keep = (list) => { for (let i = 0; i < 64 * 16384; i++) list.push({ i, pad: [i, i, i, i] }) }
    const grow = holdYoungGeneration(${args})
    const kept = []
    keep(kept)
    const sizes = [size()]
    if (${release}) { grow(); keep(kept); sizes.push(size()) }
    console.log(JSON.stringify(sizes))`
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    {
      timeout: 60_000,
    },
  )
  return (JSON.parse(stdout) as number[]).map((bytes) => bytes / MB)
}

test('held, the young generation stays small however much of a start stays alive; released, it grows again under a load', async () => {
  const [held, released] = await youngGenerationAfter('[], ""', true)
  assert.ok(held !== undefined && held <= 4, `held at ${held} MB`)
  assert.ok(released !== undefined && released >= 8, `grew to ${released} MB`)
})

test('a growth factor given on the command line or in NODE_OPTIONS is left alone', async () => {
  for (const args of [
    '["--semi-space-growth-factor=2"], ""',
    '[], "--max-old-space-size=100 --semi_space_growth_factor=2"',
  ]) {
    const [size] = await youngGenerationAfter(args, false)
    assert.ok(size !== undefined && size >= 8, `${args}: ${size} MB`)
  }
})
