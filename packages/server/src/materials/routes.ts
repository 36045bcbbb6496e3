import { MAX_ID } from '../db/material-repo.js'
import { answerError, type ErrorPath } from '../shared/error-path.js'
import { methodNotAllowed, UeError } from '../shared/errors.js'
import { readJsonBody } from '../shared/json-body.js'
import type { Metrics } from '../shared/metrics.js'
import type { BodyTimeouts } from '../shared/request-body.js'
import { urlOf } from '../shared/request-url.js'
import { errorResponse, jsonResponse } from '../shared/respond.js'
import type { FetchHandler, Logger } from '../shared/types.js'
import type { Authorize, Scope } from './auth.js'
import {
  CategoryPatchSchema,
  CategoryWriteSchema,
  MaterialPatchSchema,
  MaterialWriteSchema,
  parseWith,
  SearchSchema,
} from './schemas.js'
import type { DeleteMode, MaterialsService } from './service.js'

export interface MaterialsHandlerOptions {
  service: MaterialsService
  authorize: Authorize
  maxBodyBytes: number
  timeouts: BodyTimeouts
  log: Logger
  /** Counts refusals by code; none when absent. */
  metrics?: Metrics
  /**
   * The mount path: paths are then matched exactly below it. Without it, routes are matched on
   * the last segments of the path, so the handler works at any prefix (`/x/y/categories`).
   */
  basePath?: string
}

type Resource = 'categories' | 'materials'
type Route =
  | { kind: 'categories' }
  | { kind: 'search' }
  | { kind: 'collection'; resource: Resource }
  | { kind: 'item'; resource: Resource; id: string }

/**
 * The materials API (docs/materials.md): `GET categories`, `POST materials` (GET with a query
 * works too), and the admin routes `admin/categories[/:id]`,
 * `admin/materials[/:id]`. Errors are `{error: {code, message}}` with the code's status.
 */
export function createMaterialsHandler(o: MaterialsHandlerOptions): FetchHandler {
  const { service } = o
  const body = (request: Request, emptyAs?: unknown) =>
    readJsonBody(request, { maxBytes: o.maxBodyBytes, timeouts: o.timeouts, emptyAs })

  async function handle(request: Request, route: Route, url: URL): Promise<Response> {
    const method = request.method
    const allow = (methods: readonly string[], scope: Scope) => {
      if (!methods.includes(method)) throw methodNotAllowed(methods)
      return o.authorize(request, scope)
    }

    switch (route.kind) {
      case 'categories':
        await allow(['GET', 'HEAD'], 'read')
        return jsonResponse(await service.categoryTree())
      case 'search': {
        await allow(['POST', 'GET', 'HEAD'], 'read')
        const input = method === 'POST' ? await body(request, {}) : searchParams(url)
        return jsonResponse(await service.search(parseWith(SearchSchema, input)))
      }
      case 'collection': {
        await allow(['POST'], 'admin')
        const input = await body(request)
        const created =
          route.resource === 'categories'
            ? await service.createCategory(parseWith(CategoryWriteSchema, input))
            : await service.createMaterial(parseWith(MaterialWriteSchema, input))
        return jsonResponse(created, 201)
      }
      case 'item': {
        await allow(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], 'admin')
        return item(request, route.resource, pathId(route.id), url)
      }
    }
  }

  async function item(request: Request, resource: Resource, id: number, url: URL) {
    const categories = resource === 'categories'
    switch (request.method) {
      case 'PUT': {
        const input = await body(request)
        const { view, created } = categories
          ? await service.putCategory(id, parseWith(CategoryWriteSchema, input))
          : await service.putMaterial(id, parseWith(MaterialWriteSchema, input))
        return jsonResponse(view, created ? 201 : 200)
      }
      case 'PATCH': {
        const input = await body(request)
        return jsonResponse(
          categories
            ? await service.patchCategory(id, parseWith(CategoryPatchSchema, input))
            : await service.patchMaterial(id, parseWith(MaterialPatchSchema, input)),
        )
      }
      case 'DELETE':
        return jsonResponse(
          categories
            ? await service.deleteCategory(id, deleteMode(url))
            : await service.deleteMaterial(id),
        )
      default:
        return jsonResponse(
          categories ? await service.getCategory(id) : await service.getMaterial(id),
        )
    }
  }

  const errors: ErrorPath = {
    area: 'materials',
    log: o.log,
    count: (code) => o.metrics?.refused('materials', code),
  }
  // A refused request's connection ends with the answer, once the node bridge has read what is
  // left of the body (within http.drainMaxBytes), so the client gets to read the answer.
  const errorsWithBody: ErrorPath = {
    ...errors,
    answer: (error) => errorResponse(error, { headers: { Connection: 'close' } }),
  }

  return async (request) => {
    const url = urlOf(request)
    try {
      const route = matchRoute(url.pathname, o.basePath)
      if (!route) throw new UeError('UE_NOT_FOUND')
      return await handle(request, route, url)
    } catch (e) {
      const withBody = request.method !== 'GET' && request.method !== 'HEAD'
      return answerError(e, request, withBody ? errorsWithBody : errors)
    }
  }
}

/** With a mount path, the segments below it; without one, the longest tail that is a route. */
function matchRoute(pathname: string, basePath: string | undefined): Route | null {
  const segments = segmentsOf(pathname)
  if (basePath !== undefined) {
    const base = segmentsOf(basePath)
    if (!base.every((s, i) => segments[i] === s)) return null
    return routeOf(segments.slice(base.length))
  }
  for (const length of [3, 2, 1])
    if (segments.length >= length) {
      const route = routeOf(segments.slice(-length))
      if (route) return route
    }
  return null
}

/** `categories`, `materials`, `admin/<resource>`, `admin/<resource>/<id>`. */
function routeOf(segments: readonly string[]): Route | null {
  const [first, resource, id] = segments
  if (segments.length === 1 && first === 'categories') return { kind: 'categories' }
  if (segments.length === 1 && first === 'materials') return { kind: 'search' }
  if (first !== 'admin' || (resource !== 'categories' && resource !== 'materials')) return null
  if (segments.length === 2) return { kind: 'collection', resource }
  return segments.length === 3 && id !== undefined ? { kind: 'item', resource, id } : null
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s !== '')
}

function pathId(raw: string): number {
  const id = /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(id <= MAX_ID)) throw new UeError('UE_NOT_FOUND')
  return id
}

const SEARCH_KEYS = ['categoryId', 'keyword', 'keywords', 'page', 'pageSize'] as const

/** `GET materials?categoryId=…&keyword=…&page=…&pageSize=…`; a repeated key is refused. */
function searchParams(url: URL): Record<string, string> {
  const out: Record<string, string> = {}
  for (const key of SEARCH_KEYS) {
    const values = url.searchParams.getAll(key)
    if (values.length > 1)
      throw new UeError('UE_VALIDATION_FAILED', { detail: `${key}: given more than once` })
    const value = values[0]
    if (value !== undefined && !(value === '' && (key === 'page' || key === 'pageSize')))
      out[key] = value
  }
  return out
}

/** `?cascade=true` or `?moveTo=<id>` (`0`: to the top level, materials uncategorised). */
function deleteMode(url: URL): DeleteMode {
  const cascade = url.searchParams.get('cascade')
  const moveTo = url.searchParams.get('moveTo')
  const invalid = (detail: string) => new UeError('UE_VALIDATION_FAILED', { detail })
  if (cascade !== null && !['true', 'false', '1', '0'].includes(cascade))
    throw invalid('cascade: must be true or false')
  const cascading = cascade === 'true' || cascade === '1'
  if (moveTo === null) return cascading ? { kind: 'cascade' } : { kind: 'refuse' }
  if (cascading) throw invalid('cascade and moveTo: give one of them')
  const to = /^\d{1,10}$/.test(moveTo) ? Number(moveTo) : Number.NaN
  if (!(to <= MAX_ID)) throw invalid('moveTo: must be a category id, or 0 for the top level')
  return { kind: 'move', to: to === 0 ? null : to }
}
