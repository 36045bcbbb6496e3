import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCli } from '../helpers/cli.js'
import { fakeLibreOffice, INSTALL_LIBREOFFICE, SOFFICE } from '../helpers/libreoffice.js'
import { tempDir } from '../helpers/temp-dir.js'
import { describe, type TestContext, test } from '../helpers/test.js'

const MAIN = fileURLToPath(new URL('../../bin/ueditor-server.cjs', import.meta.url))
const INSTALL = 'apt-get install -y libreoffice-draw-nogui libreoffice-writer-nogui'

/** `ueditor-server doctor` with a fresh data folder and `env`: its `word` line and the one after. */
async function doctorWord(t: TestContext, env: NodeJS.ProcessEnv): Promise<string[]> {
  const dir = await tempDir(t, 'ueditor-word-')
  const out = await runCli(['doctor'], { UEDITOR_DATA_DIR: join(dir, 'data'), PORT: '0', ...env })
  const lines = out.stdout.split('\n')
  const at = lines.findIndex((l) => /^\w+ +word: /.test(l))
  assert.ok(at >= 0, out.stdout)
  return lines.slice(at, at + 2)
}

/** The binary started as the README says (UEDITOR_AUTH=none, port 0): its banner's `word` row. */
async function bannerWord(t: TestContext, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = await tempDir(t, 'ueditor-word-')
  const child = spawn(process.execPath, [MAIN], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      UEDITOR_DATA_DIR: join(dir, 'data'),
      PORT: '0',
      UEDITOR_AUTH: 'none',
      UEDITOR_LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  t.after(() => child.kill('SIGKILL'))
  let stderr = ''
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (c) => {
      stderr += c
      const m = /\n {2}word: +(.*)\n/.exec(stderr)
      if (m) resolve(m[1] as string)
    })
    child.once('exit', (code) =>
      reject(new Error(`exited with ${code} before its word line:\n${stderr}`)),
    )
  })
}

describe('doctor and the start-up lines say whether Word conversion works and what to install', () => {
  if (SOFFICE === null)
    test('without LibreOffice the tests say what to install', (t) => {
      if (process.env.CI === 'true') assert.fail(INSTALL_LIBREOFFICE)
      t.skip(INSTALL_LIBREOFFICE)
    })

  test('with the LibreOffice on PATH, doctor and the banner say Word pictures and .doc import work', {
    skip: SOFFICE === null ? INSTALL_LIBREOFFICE : false,
  }, async (t) => {
    const ready = `LibreOffice ${SOFFICE}: Word pictures (EMF/WMF) are converted to PNG, Writer found for .doc import`
    assert.deepEqual((await doctorWord(t, {}))[0], `ok    word: ${ready}`)
    assert.equal(await bannerWord(t, {}), ready)
  })

  test('with UEDITOR_IMAGES_SOFFICE naming a missing binary, doctor warns and both name the packages to install', async (t) => {
    const env = { UEDITOR_IMAGES_SOFFICE: '/nonexistent/soffice' }
    const missing =
      'no LibreOffice (/nonexistent/soffice not found): Word pictures (EMF/WMF) are refused, .doc import is unavailable'
    const fix = `${INSTALL} (docs/word.md), or set UEDITOR_IMAGES_SOFFICE to soffice's path`
    assert.deepEqual(await doctorWord(t, env), [`warn  word: ${missing}`, `      fix: ${fix}`])
    assert.equal(await bannerWord(t, env), `${missing}; install: ${fix}`)
  })

  test('a LibreOffice without Writer is named: pictures convert, .doc import needs libreoffice-writer-nogui', async (t) => {
    const soffice = await fakeLibreOffice(await tempDir(t, 'ueditor-lo-'), { draw: true })
    const env = { UEDITOR_IMAGES_SOFFICE: soffice }
    const line = `LibreOffice ${soffice}: Word pictures (EMF/WMF) are converted to PNG, .doc import unavailable (no LibreOffice Writer)`
    const fix = 'apt-get install -y libreoffice-writer-nogui (docs/word.md)'
    assert.deepEqual(await doctorWord(t, env), [`warn  word: ${line}`, `      fix: ${fix}`])
    assert.equal(await bannerWord(t, env), `${line}; install: ${fix}`)
  })

  test('with conversion turned off, doctor and the banner say so and ask for nothing', async (t) => {
    const dir = await tempDir(t, 'ueditor-word-')
    const config = join(dir, 'ueditor.json')
    await writeFile(config, JSON.stringify({ images: { metafiles: { enabled: false } } }))
    const off =
      'off (images.metafiles.enabled is false): Word pictures (EMF/WMF) are refused, .doc import is unavailable'
    const [line, next] = await doctorWord(t, { UEDITOR_CONFIG: config })
    assert.equal(line, `ok    word: ${off}`)
    assert.doesNotMatch(next ?? '', /fix:/)
    assert.equal(await bannerWord(t, { UEDITOR_CONFIG: config }), off)
  })
})
