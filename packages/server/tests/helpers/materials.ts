import type { TestContext } from 'node:test'
import type { ServerConfigInput } from '../../src/config/schema.js'
import { startTestServer, type TestServer } from './start-server.js'

export const ADMIN_TOKEN = 'admin-0123456789abcdef-ABCDEF'
export const READ_TOKEN = 'reader-0123456789abcdef-ABCDEF'

export interface Answer {
  status: number
  headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers field by field
  body: any
}

export interface MaterialsClient {
  /** `<server><routes.materials><path>` */
  url(path: string): string
  request(method: string, path: string, body?: unknown, headers?: HeadersInit): Promise<Answer>
  categories(): Promise<Answer>
  search(body: unknown): Promise<Answer>
  /** Admin calls with the admin token. */
  admin(method: string, path: string, body?: unknown): Promise<Answer>
}

/**
 * A real server with an empty materials store (no demo seed) and an admin token; `config`
 * adds to or replaces the `materials` section.
 */
export async function startMaterialsServer(
  t: TestContext,
  config: ServerConfigInput = {},
): Promise<TestServer & { materials: MaterialsClient }> {
  const srv = await startTestServer(t, {
    ...config,
    materials: { seed: false, adminTokens: [ADMIN_TOKEN], ...config.materials },
  })
  return Object.assign(srv, {
    materials: materialsClient(`${srv.url}${srv.ue.config.routes.materials}`),
  })
}

export function materialsClient(base: string, token?: string): MaterialsClient {
  const request = requester(base, token)
  const admin = requester(base, ADMIN_TOKEN)
  return {
    url: (path) => `${base}${path}`,
    request,
    categories: () => request('GET', '/categories'),
    search: (body) => request('POST', '/materials', body),
    admin,
  }
}

function requester(base: string, token: string | undefined): MaterialsClient['request'] {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: HeadersInit = {},
  ): Promise<Answer> => {
    const h = new Headers(headers)
    if (token !== undefined && !h.has('authorization')) h.set('Authorization', `Bearer ${token}`)
    let payload: string | Blob | undefined
    if (body !== undefined) {
      if (typeof body === 'string') payload = body
      else if (Buffer.isBuffer(body)) payload = new Blob([new Uint8Array(body)])
      else payload = JSON.stringify(body)
      if (!h.has('content-type')) h.set('Content-Type', 'application/json')
    }
    const res = await fetch(`${base}${path}`, { method, headers: h, body: payload })
    const text = await res.text()
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined }
  }
}

/** Creates categories and materials through the admin API; throws on any refusal. */
export async function adminCreate(
  client: MaterialsClient,
  kind: 'categories' | 'materials',
  body: Record<string, unknown>,
  // biome-ignore lint/suspicious/noExplicitAny: the created view
): Promise<any> {
  const res = await client.admin('POST', `/admin/${kind}`, body)
  if (res.status !== 201)
    throw new Error(`create ${kind}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}
