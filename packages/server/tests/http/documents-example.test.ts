import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { openMetadataStore } from '../../src/db/open.js'
import type { StorageKey } from '../../src/shared/types.js'
import { ALICE, TOKENS } from '../helpers/auth.js'
import { startTestServer } from '../helpers/start-server.js'
import { test } from '../helpers/test.js'

// Tests run from packages/server/dist/tests/http.
const repoFile = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../../../${path}`, import.meta.url)), 'utf8')
const DOC = repoFile('docs/documents.md')

/** The words of a shell command as sh would split them: quotes, `$VAR` in double quotes, `\`-newlines. */
function shellWords(command: string, vars: Record<string, string>): string[] {
  const text = command.replace(/\\\n\s*/g, ' ')
  const words: string[] = []
  let word: string | null = null
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      word = (word ?? '') + text.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1)
      const inner = text.slice(i + 1, end).replace(/\$([A-Z_]+)/g, (_, name) => vars[name] ?? '')
      word = (word ?? '') + inner
      i = end
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word)
      word = null
    } else word = (word ?? '') + c
  }
  if (word !== null) words.push(word)
  return words
}

/** The request a curl command line makes, for the options the example uses. */
function curlRequest(words: string[]) {
  assert.equal(words[0], 'curl')
  let method = 'GET'
  let url = ''
  let body: string | undefined
  const headers: Record<string, string> = {}
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string
    if (w === '-X') method = words[++i] as string
    else if (w === '-H') {
      const header = words[++i] as string
      const at = header.indexOf(':')
      headers[header.slice(0, at).trim()] = header.slice(at + 1).trim()
    } else if (w === '--data-binary') body = words[++i]
    else if (w.startsWith('-')) assert.fail(`the test does not know curl's ${w}`)
    else url = w
  }
  return { method, url, headers, body }
}

test('the curl example of docs/documents.md, run as written, answers what the docs show', async (t) => {
  const curlBlock = /```sh\n(curl -X PUT [^`]*?)\n```\n\nanswers\n\n```json\n(.*)\n```/.exec(DOC)
  assert.ok(curlBlock, 'the curl example and its answer are in docs/documents.md')
  const [, command, answer] = curlBlock as unknown as [string, string, string]

  const srv = await startTestServer(t, {
    auth: { mode: 'tokens', tokens: TOKENS },
    documents: { enabled: true },
  })
  // The stored file the example names, as an upload would have indexed it.
  const store = await openMetadataStore(srv.ue.config.index)
  try {
    await store.files.add({
      key: 'image/20261126/1764139200123-k3j9x2.png' as StorageKey,
      category: 'image',
      originalName: 'a.png',
      ext: '.png',
      size: 68,
      mime: 'image/png',
      sha256: 'e'.repeat(64),
      owner: 'alice',
    })
  } finally {
    await store.close()
  }

  const request = curlRequest(shellWords(command, { UE: srv.url, TOKEN: ALICE }))
  const res = await fetch(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  })
  assert.equal(res.status, 200)
  assert.deepEqual(await res.json(), JSON.parse(answer))
})
