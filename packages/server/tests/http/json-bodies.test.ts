import assert from 'node:assert/strict'
import { startAiUpstream } from '../helpers/ai-upstream.js'
import { ALICE, TOKENS } from '../helpers/auth.js'
import { ADMIN_TOKEN } from '../helpers/materials.js'
import { type RunningS3rver, startS3rver } from '../helpers/s3rver.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { after, before, describe, test } from '../helpers/test.js'

let s3: RunningS3rver
before(async () => {
  s3 = await startS3rver()
})
after(async () => {
  await s3.close()
})

interface Route {
  name: string
  url(srv: TestServer, directUrl: string): string
  method: string
  headers: Record<string, string>
}

/** Every route that takes a JSON body, each with a caller allowed to write to it. */
const ROUTES: Route[] = [
  {
    name: 'materials (admin create)',
    url: (srv) => `${srv.url}${srv.ue.config.routes.materials}/admin/materials`,
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  },
  {
    name: 'AI relay',
    url: (srv) => srv.action('ai'),
    method: 'POST',
    headers: { Authorization: `Bearer ${ALICE}` },
  },
  {
    name: 'direct upload (create)',
    url: (_srv, directUrl) => `${directUrl}/s3/multipart?token=${ALICE}`,
    method: 'POST',
    headers: {},
  },
  {
    name: 'documents (save)',
    url: (srv) => `${srv.url}/documents/a`,
    method: 'PUT',
    headers: { Authorization: `Bearer ${ALICE}` },
  },
]

const JSON_TYPE = 'application/json'

/** One malformed body per fault, and the code every route answers it with. */
const FAULTS: { fault: string; type: string; body: Blob | string; code: string }[] = [
  {
    fault: 'a type that is not JSON',
    type: 'text/plain',
    body: '{}',
    code: 'UE_MEDIA_TYPE_UNSUPPORTED',
  },
  {
    fault: 'a charset other than UTF-8',
    type: 'application/json; charset=iso-8859-1',
    body: '{}',
    code: 'UE_MEDIA_TYPE_UNSUPPORTED',
  },
  {
    fault: 'bytes that are not UTF-8',
    type: JSON_TYPE,
    body: new Blob([new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])]),
    code: 'UE_BODY_INVALID',
  },
  { fault: 'text that is not JSON', type: JSON_TYPE, body: '{"html":', code: 'UE_BODY_INVALID' },
  {
    fault: 'JSON that is not an object',
    type: JSON_TYPE,
    body: '[1, 2]',
    code: 'UE_VALIDATION_FAILED',
  },
  {
    fault: 'a body past the size cap',
    type: JSON_TYPE,
    body: `{"x":"${'y'.repeat(2 * 1024 * 1024)}"}`,
    code: 'UE_BODY_TOO_LARGE',
  },
  { fault: 'an empty body', type: JSON_TYPE, body: '', code: 'UE_BODY_INVALID' },
]

/** The refusal's code: the JSON error, or the first SSE event (the AI relay answers in events). */
async function codeOf(res: Response): Promise<string | undefined> {
  const text = await res.text()
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const data = text.split('\n').find((l) => l.startsWith('data:'))
    return data === undefined ? undefined : JSON.parse(data.slice(5)).code
  }
  return JSON.parse(text).error?.code
}

describe('JSON request bodies', () => {
  test('every JSON route refuses the same malformed body with the same code', async (t) => {
    const upstream = await startAiUpstream(t)
    const srv = await startTestServer(t, {
      auth: { mode: 'tokens', tokens: TOKENS, queryParam: 'token' },
      images: { enabled: false },
      storage: s3.storageConfig(await s3.createBucket()),
      ai: {
        baseUrl: upstream.baseUrl,
        apiKey: 'sk-test',
        model: 'test-model',
        maxPromptChars: 100,
      },
      documents: { enabled: true, maxBodyBytes: 65_536 },
      materials: { seed: false, adminTokens: [ADMIN_TOKEN] },
    })
    const answer = await (await fetch(srv.action('config', `&token=${ALICE}`))).json()
    const directUrl = new URL(answer.uploadDirectUrl, srv.url).href
    const seen: string[] = []
    for (const route of ROUTES) {
      for (const f of FAULTS) {
        const res = await fetch(route.url(srv, directUrl), {
          method: route.method,
          headers: { ...route.headers, 'Content-Type': f.type },
          body: f.body,
        })
        const code = await codeOf(res)
        seen.push(`${route.name}: ${f.fault} → ${code}`)
        assert.equal(code, f.code, `${route.name}: ${f.fault}`)
      }
    }
    assert.equal(upstream.requests.length, 0, 'no malformed call reached the model')
    console.log(seen.join('\n'))
  })
})
