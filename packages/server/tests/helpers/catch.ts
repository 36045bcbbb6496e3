import assert from 'node:assert/strict'
import type { TestServer } from './start-server.js'

export interface CatchEntry {
  state: string
  code?: string
  url?: string
  title?: string
  original?: string
  size?: number
  source: string
}

export interface CatchAnswer {
  state: string
  list: CatchEntry[]
}

/**
 * What UEditor Plus sends: url-encoded `source[]`, one or more. Checks what every catch
 * answer must be (HTTP 200, strict JSON, SUCCESS, one entry per source in request order).
 */
export async function catchUrls(
  srv: TestServer,
  sources: string[],
  o: { field?: string; headers?: Record<string, string> } = {},
): Promise<CatchAnswer> {
  const body = new URLSearchParams()
  for (const source of sources) body.append(o.field ?? 'source[]', source)
  const res = await fetch(srv.action('catch', '&'), {
    method: 'POST',
    body,
    ...(o.headers ? { headers: o.headers } : {}),
  })
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  const answer = (await res.json()) as CatchAnswer
  assert.equal(answer.state, 'SUCCESS')
  assert.deepEqual(
    answer.list.map((e) => e.source),
    sources,
  )
  return answer
}
